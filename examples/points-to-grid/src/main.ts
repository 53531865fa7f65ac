import { CliExit, errorLines, processLines, usageHint } from '@hs/cli-options';
import { HsError, unwrap } from '@hs/streams';
import { buildGrid } from './build-grid.js';
import { parseCliArguments } from './cli-options.js';
import { bunnyPoints, loadPoints } from '@hs/example-point-cloud-input';

// Exit codes: 0 done (and --help), 2 a usage error, 1 a failed build or write; errors are
// `points-to-grid: <message>` lines. A reader that goes away (`| head`) ends the process quietly.
const PROGRAM = 'points-to-grid';
const output = processLines();
const request = parseCliArguments(process.argv.slice(2), output);
if (!request.ok) {
  for (const line of errorLines(PROGRAM, request.error.message, usageHint(PROGRAM))) output.error(line);
  process.exitCode = CliExit.Usage;
} else if (request.value.kind === 'exit') {
  process.exitCode = request.value.exitCode;
} else {
  const options = request.value.options;
  try {
    const cloud = options.input === undefined ? bunnyPoints() : unwrap(loadPoints(options.input));
    for (const line of await buildGrid({ ...options, cloud })) output.log(line);
  } catch (thrown) {
    // Failures reject with HsError; anything else is a bug worth its stack trace.
    if (!(thrown instanceof HsError)) throw thrown;
    for (const line of errorLines(PROGRAM, thrown.message)) output.error(line);
    process.exitCode = CliExit.Failure;
  }
}
