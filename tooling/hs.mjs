// `pnpm hs ...` from the checkout: runs the built hs command line, or says to build it first. A file of its
// own (not a `test -f` in the root script) so that pnpm does not echo the check before hs's output.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
if (existsSync(bin)) {
  await import(bin);
} else {
  process.stderr.write('hs: packages/cli/dist/bin.js is missing\nhint: run pnpm build first\n');
  process.exitCode = 1;
}
