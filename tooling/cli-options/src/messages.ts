/** The exit codes every hs command line uses. */
export const CliExit = Object.freeze({
  /** 0: done (also `--help` and `--version`). */
  Success: 0,
  /** 1: the work failed after the command line was accepted (a missing input, a run or write failure). */
  Failure: 1,
  /** 2: the command line was wrong (unknown option, bad value), found before any work started. */
  Usage: 2,
} as const);

/** One of the values of `CliExit`. */
export type CliExitValue = (typeof CliExit)[keyof typeof CliExit];

/** The hint line of a usage error: where the options are listed. */
export function usageHint(command: string): string {
  return `hint: ${command} --help lists the options`;
}

/**
 * The one error format: `<program>: <message>`, then `hint: <hint>` when there is one.
 * @returns the lines to print to standard error.
 */
export function errorLines(program: string, message: string, hint?: string): string[] {
  return hint === undefined ? [`${program}: ${message}`] : [`${program}: ${message}`, hint];
}
