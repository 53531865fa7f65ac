import type { CliLines } from './program.js';

/** A stream the process writes its lines to: `process.stdout` or `process.stderr`. */
export interface LineStream {
  write(text: string): boolean;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

/**
 * The process's standard output and error as lines. When the reader goes away (`EPIPE`: `hs doctor | head
 * -2`), the process ends quietly at once with the exit code set so far (`process.exitCode`, else 0), as
 * other command-line tools do, instead of an uncaught error's stack trace and exit 1. Other stream errors
 * are rethrown.
 * @param exit what ends the process (tests pass their own); default `process.exit`.
 */
export function processLines(
  stdout: LineStream = process.stdout,
  stderr: LineStream = process.stderr,
  exit: (code: number) => void = (code) => process.exit(code),
): CliLines {
  let ended = false;
  const onError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'EPIPE') throw error;
    if (ended) return;
    ended = true;
    exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  };
  stdout.on('error', onError);
  stderr.on('error', onError);
  return {
    log: (line) => {
      if (!ended) stdout.write(`${line}\n`);
    },
    error: (line) => {
      if (!ended) stderr.write(`${line}\n`);
    },
  };
}
