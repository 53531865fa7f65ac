#!/usr/bin/env node
import { runHs } from './hs-program.js';

const quiet = process.stderr.isTTY !== true || (process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false');
let interrupts = 0;

process.exitCode = await runHs(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  progress: quiet ? null : process.stderr,
  env: process.env,
  cwd: process.cwd(),
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
