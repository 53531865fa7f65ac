/** A writable terminal for live progress: what `cli-progress` needs of `process.stderr`. */
export interface ProgressStream {
  /** Writes text (including cursor-movement escape sequences); returns `false` when the buffer is full. */
  write(text: string): boolean;
  /** `true` for a terminal; the bar draws nothing otherwise. */
  readonly isTTY?: boolean;
  /** Width in characters; the bar's line is cut to it (default 80). */
  readonly columns?: number;
}

/**
 * Everything a command reads from and writes to the outside world, so that tests run commands in-process.
 * `out`/`err` take one line each, without the trailing newline.
 */
export interface CliIo {
  /** Results: plan renderings, reports, final metrics. */
  readonly out: (line: string) => void;
  /** Diagnostics: `hs: <ErrorCode>: <message>` lines and their `hint:` lines. */
  readonly err: (line: string) => void;
  /**
   * Terminal for the progress bar and live status line of `hs run`; `null` turns them off (quiet mode,
   * as when standard error is not a TTY or `CI` is set).
   */
  readonly progress: ProgressStream | null;
  /** Environment variables (`HS_BACKEND`, `CI`, ...). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Directory relative paths and example names are resolved from. */
  readonly cwd: string;
  /**
   * Registers `handler` for Ctrl-C (SIGINT) while a run is in progress; returns the function that removes it.
   * In-process callers pass a function that never calls `handler`, or one wired to their own trigger.
   */
  readonly onInterrupt: (handler: () => void) => () => void;
}
