#!/usr/bin/env node
import { processLines, userDirectory } from '@hs/cli-options';
import { runHs } from './hs-program.js';

const quiet = process.stderr.isTTY !== true || (process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false');
let interrupts = 0;
// A reader that goes away (`hs doctor | head -2`) ends the process quietly with the code so far.
const lines = processLines();

process.exitCode = await runHs(process.argv.slice(2), {
  out: lines.log,
  err: lines.error,
  progress: quiet ? null : process.stderr,
  env: process.env,
  // Relative paths are the user's: where pnpm was typed (INIT_CWD), else the working directory.
  cwd: userDirectory(process.env),
  onInterrupt: (handler) => {
    const onSigint = (): void => {
      interrupts += 1;
      if (interrupts === 1) {
        handler();
        return;
      }
      process.stderr.write('interrupted twice: exiting without waiting for the drain\n');
      process.exit(130);
    };
    process.on('SIGINT', onSigint);
    return () => process.off('SIGINT', onSigint);
  },
});
