import { runCli } from './cli.js';

// The first Ctrl-C stops the run cleanly (drain, summary, exit 130); a second one ends the process at once.
const interrupt = new AbortController();
const onSigint = (): void => interrupt.abort();
process.once('SIGINT', onSigint);
process.exitCode = await runCli(
  process.argv.slice(2),
  {
    log: (line) => console.log(line),
    error: (line) => console.error(line),
  },
  interrupt.signal,
);
process.off('SIGINT', onSigint);
