/**
 * Exit codes of the `hs` command line.
 *
 * - `Success` (0): the command did what it was asked; for `hs doctor`, the host backend works.
 * - `Failure` (1): the work itself failed: a graph that does not compile, a run that returned an error,
 *   a benchmark that crashed, a file that could not be written, or (`hs doctor`) a host backend that does not work.
 * - `Usage` (2): the command line was wrong: unknown command or option, a module that cannot be found or
 *   is not a pipeline module, module arguments the module rejected.
 * - `Interrupted` (130, 128 + SIGINT): the run was stopped by Ctrl-C (drained, every slot returned).
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
