/**
 * Exit codes of the `hs` command line (`hs --help` states the same rule).
 *
 * - `Success` (0): the command did what it was asked; for `hs doctor`, the host backend works.
 * - `Failure` (1): the work failed after the command line was accepted: an input file that is missing or
 *   unreadable (found when the module builds its graph), a graph that does not build or compile, a run
 *   that returned an error, a benchmark that crashed, a file that could not be written, a module that
 *   throws or returns something that is not a `Result`, or (`hs doctor`) a host backend that does not work.
 * - `Usage` (2): the command line was wrong, found before any work starts: unknown command or option, a
 *   bad or conflicting value (`--sections foo`, `--text -o plan.svg`), a module or hs checkout that
 *   cannot be found or loaded, module arguments the module's `parseArguments()` rejects.
 * - `Interrupted` (130, 128 + SIGINT): the run was stopped by Ctrl-C (drained, every slot returned).
 * @example
 * ```ts
 * import { ExitCode, runHs } from '@hs/cli';
 *
 * const io = { out: () => {}, err: () => {}, progress: null, env: {}, cwd: process.cwd(), onInterrupt: () => () => {} };
 * const code = await runHs(['plan', '--no-such-flag'], io);
 * console.log(`a bad flag exits ${code}: ${code === ExitCode.Usage ? 'usage error (2)' : 'something else'}; failed work exits ${ExitCode.Failure}`);
 * ```
 */
export const ExitCode = Object.freeze({
  /** 0: done; for `hs doctor`, the host backend works. */
  Success: 0,
  /** 1: the work failed (compile, run, benchmark, output file, or a broken host backend). */
  Failure: 1,
  /** 2: the command line, the module or its arguments were wrong. */
  Usage: 2,
  /** 130: stopped by Ctrl-C after a clean drain. */
  Interrupted: 130,
} as const);

/** One of the values of `ExitCode`. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
