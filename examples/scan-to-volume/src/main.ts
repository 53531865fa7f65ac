import { processLines } from '@hs/cli-options';
import { runCli } from './cli.js';

// The first Ctrl-C stops the run cleanly (drain, summary, exit 130); a second one ends the process at once.
const interrupt = new AbortController();
const onSigint = (): void => interrupt.abort();
process.once('SIGINT', onSigint);
// A reader that goes away (`node dist/main.js | head`) ends the process quietly with the code so far.
process.exitCode = await runCli(process.argv.slice(2), processLines(), interrupt.signal);
process.off('SIGINT', onSigint);
