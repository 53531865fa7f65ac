import { CliExit, createProgram, errorLines, parseOptions, processLines } from '@hs/cli-options';
import { HsError } from '@hs/streams';
import { explainCapacity } from './explain-capacity.js';

// The hs command-line convention with no options of its own: --help, `--` accepted, exit 2 for an
// unknown option, 1 for a failed run; a reader that goes away (`| head`) ends the process quietly.
const PROGRAM = 'derived-capacity';
const output = processLines();
const program = createProgram(PROGRAM, 'Explains how hs derives a pool capacity from rates and lifetimes, then runs the graph and shows the published rate-queue inspection.', output);
const exitCode = parseOptions(program, process.argv.slice(2));
if (exitCode !== null) {
  process.exitCode = exitCode;
} else {
  try {
    for (const line of await explainCapacity(6)) output.log(line);
  } catch (thrown) {
    if (!(thrown instanceof HsError)) throw thrown;
    for (const line of errorLines(PROGRAM, thrown.message)) output.error(line);
    process.exitCode = CliExit.Failure;
  }
}
