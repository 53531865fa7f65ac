import { createRequire } from 'node:module';
import { type Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { commanderExit, createProgram, parseNumberOption, usageHint, withoutLeadingSeparators } from '@hs/cli-options';
import { ErrorCode, HsError } from '@hs/streams';
import { benchCommand } from './bench-command.js';
import { BENCH_SECTIONS } from './bench-sections.js';
import type { CliIo } from './cli-io.js';
import { doctorCommand } from './doctor-command.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { planCommand } from './plan-command.js';
import { PLAN_FORMATS, type PlanFormat } from './plan-format.js';
import { runCommand } from './run-command.js';

/**
 * Version printed by `hs --version`: the `version` of this package's `package.json`.
 * @example
 * ```ts
 * import { HS_CLI_VERSION, runHs } from '@hs/cli';
 *
 * const lines: string[] = [];
 * await runHs(['--version'], { out: (l) => lines.push(l), err: (l) => lines.push(l), progress: null, env: {}, cwd: process.cwd(), onInterrupt: () => () => {} });
 * console.log(`hs --version printed ${lines.join('')}; this package is ${HS_CLI_VERSION}`);
 * ```
 */
export const HS_CLI_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/**
 * Runs the `hs` command line on `args` (the user's arguments, without `node` and the script). A `--` in
 * front of everything (which package managers pass through) is dropped; then everything before the first
 * `--` is for `hs`, everything after it goes to the pipeline module of `hs run` and `hs plan`.
 * Commands: `doctor`, `run`, `plan`, `bench` (see `hs <command> --help`).
 *
 * Every failure of a command is an exit code, not a rejection: the promise resolves with what the
 * process should exit with (`bin.ts` sets `process.exitCode` to it).
 *
 * @returns the exit code (see `ExitCode`). Usage errors (unknown command or option, a bad number) are
 *   printed as `hs: <message>` and a `hint:` line and answered with `ExitCode.Usage`; `--help` and
 *   `--version` with 0.
 *   An `HsError` thrown by a module (a programmer error) is printed and answered with `ExitCode.Failure`.
 * @throws HsError (the promise rejects) `InvalidArgument` when `args` is not an array of strings or `io`
 *   lacks its `out`/`err` functions (a caller's bug: nothing was run); anything else a module throws
 *   propagates (a bug, worth its stack trace).
 * @example
 * ```ts
 * import { ExitCode, runHs, type CliIo } from '@hs/cli';
 *
 * // the hs command line in-process, its output collected instead of printed
 * const out: string[] = [];
 * const io: CliIo = { out: (line) => out.push(line), err: (line) => out.push(line), progress: null, env: { HS_BACKEND: 'host' }, cwd: process.cwd(), onInterrupt: () => () => {} };
 * const code = await runHs(['doctor'], io); // what this machine supports (run, plan and bench need an hs checkout or a module path)
 * console.log(`exit ${code} (${code === ExitCode.Success ? 'success' : 'failed'}); first line: ${out.join('\n').split('\n')[0]}`);
 * ```
 */
export async function runHs(args: readonly string[], io: CliIo): Promise<ExitCodeValue> {
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) {
    throw new HsError(ErrorCode.InvalidArgument, 'runHs(args, io): args must be an array of strings (the command line without node and the script)');
  }
  if (typeof io !== 'object' || io === null || typeof io.out !== 'function' || typeof io.err !== 'function') {
    throw new HsError(ErrorCode.InvalidArgument, 'runHs(args, io): io must be a CliIo with out and err functions');
  }
  const given = withoutLeadingSeparators(args);
  const split = given.indexOf('--');
  const hsArgs = split < 0 ? given : given.slice(0, split);
  const moduleArgs = split < 0 ? [] : given.slice(split + 1);
  let exitCode: ExitCodeValue = ExitCode.Success;
  const program = buildProgram(io, moduleArgs, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(hsArgs, { from: 'user' });
  } catch (thrown) {
    if (thrown instanceof CommanderError) return commanderExit(thrown);
    if (thrown instanceof HsError) {
      io.err(`hs: ${thrown.message}`);
      return ExitCode.Failure;
    }
    throw thrown;
  }
  return exitCode;
}

/** The rule behind `ExitCode`, as `hs --help` states it. */
const EXIT_CODES_HELP = [
  '',
  'Exit codes:',
  '  0    done (hs doctor: the host backend works)',
  '  1    the work failed after the command line was accepted: a missing or',
  '       unreadable input file, a build, compile, run or benchmark failure, an',
  '       output that cannot be written (hs doctor: the host backend fails)',
  '  2    the command line was wrong, found before any work starts: an unknown',
  '       command or option, a bad or conflicting value, a module or checkout',
  "       that cannot be found or loaded, module arguments its parser rejects",
  '  130  hs run stopped by Ctrl-C (after a clean drain)',
].join('\n');

function buildProgram(io: CliIo, moduleArgs: readonly string[], finish: (code: ExitCodeValue) => void): Command {
  const program = createProgram('hs', 'The hs command line: check this machine, run and draw pipeline modules, benchmark hs.', { log: io.out, error: io.err })
    .version(HS_CLI_VERSION)
    .addHelpText('after', EXIT_CODES_HELP);

  program
    .command('doctor')
    .showHelpAfterError(usageHint('hs doctor'))
    .description('Report the backend, CUDA runtime/driver, devices, memory-pool and IPC support, native addons, and what to do about missing pieces. Exit 0 when the host backend works.')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => finish(await doctorCommand({ json: options.json === true }, io)));

  program
    .command('run')
    .showHelpAfterError(usageHint('hs run'))
    .description('Run a pipeline module with a progress bar and live status (frames/s, latency p50/p99, pool occupancy). Ctrl-C stops it cleanly (exit 130).')
    .argument('<module>', 'example name (examples/<name> of this checkout) or path to a pipeline module file or package')
    .option('--interval <ms>', 'milliseconds between status updates (10 to 60000)', integerIn('--interval', 10, 60_000), 500)
    .option('--no-progress', 'no progress bar or status line (also when stderr is not a terminal or CI is set)')
    .option('--drain-timeout <ms>', 'milliseconds the graph gets to drain after Ctrl-C (1 to 600000)', integerIn('--drain-timeout', 1, 600_000), 10_000)
    .addHelpText('after', '\nModule options go after --, e.g.: hs run image-pipeline -- --frames 100 --rate 30')
    .action(async (target: string, options: { interval: number; progress: boolean; drainTimeout: number }) =>
      finish(await runCommand({ target, moduleArgs, intervalMs: options.interval, progress: options.progress, drainTimeoutMs: options.drainTimeout }, io)),
    );

  const plan = program
    .command('plan')
    .showHelpAfterError(usageHint('hs plan'))
    .description('Compile a pipeline module and show its plan: partitions, streams, fused edges, pools and their derivations.')
    .argument('<module>', 'example name or path to a pipeline module file or package')
    .option('-o, --output <file>', 'write to this file instead of standard output; without a format flag its extension (.txt, .json, .dot, .svg, .html; any other is refused) picks the format')
    .addHelpText(
      'after',
      '\nWithout a format flag, -o\'s extension picks the format (plan.svg is SVG),\n' +
        'else text; a flag that contradicts it (--text -o plan.svg) is refused.\n' +
        'Module options go after --, e.g.: hs plan image-pipeline -o plan.svg -- --frames 4',
    );
  for (const format of PLAN_FORMATS) {
    plan.addOption(new Option(`--${format}`, `render as ${format}${format === 'text' ? ' (default)' : ''}`).conflicts(PLAN_FORMATS.filter((f) => f !== format)));
  }
  plan.action(async (target: string, options: Partial<Record<PlanFormat, boolean>> & { output?: string }) => {
    const format = PLAN_FORMATS.find((f) => options[f] === true);
    finish(await planCommand({ target, moduleArgs, format, outFile: options.output }, io));
  });

  program
    .command('bench')
    .showHelpAfterError(usageHint('hs bench'))
    .description('Run the benchmarks of this checkout (tooling/benchmarks) and write a Markdown table and an SVG plot of the latency distributions.')
    .option('--frames <n>', 'frames per repeat (1 to 100000000)', integerIn('--frames', 1, 100_000_000), 200_000)
    .option('--repeats <n>', 'repeats of each series (1 to 1000)', integerIn('--repeats', 1, 1000), 5)
    .option('--out <dir>', 'directory for bench.json, bench.md and bench-latency.svg (relative to where the command was typed)', './out/bench')
    .option('--sections <list>', `comma-separated sections to run: ${BENCH_SECTIONS.join(', ')} (default: all; chain is required)`)
    .action(async (options: { frames: number; repeats: number; out: string; sections?: string }) =>
      finish(await benchCommand({ frames: options.frames, repeats: options.repeats, outDir: options.out, sections: options.sections }, io)),
    );
  return program;
}

/** A commander argument parser for a whole number from `min` to `max` in standard notation (`parseNumberOption`). */
function integerIn(option: string, min: number, max: number): (text: string) => number {
  return (text) => {
    const value = parseNumberOption(option, text, { min, max, integer: true });
    if (!value.ok) throw new InvalidArgumentError(value.error.message.replace(/^InvalidArgument: /, ''));
    return value.value;
  };
}
