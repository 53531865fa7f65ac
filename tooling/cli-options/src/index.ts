/**
 * The one command-line convention of `hs` and every example: commander programs that accept `--`, one
 * number parser, exit codes 0/1/2, `<program>: <message>` errors with a hint line, paths against the
 * folder the user typed the command in, `--out` defaulting to `./out/<example>` there, and a quiet end
 * when the reader of standard output goes away.
 */
export { CliExit, errorLines, usageHint } from './messages.js';
export type { CliExitValue } from './messages.js';
export { parseNumberOption } from './numbers.js';
export type { NumberRange } from './numbers.js';
export { defaultOutDir, resolveUserPath, userDirectory } from './paths.js';
export type { Environment } from './paths.js';
export { commanderExit, createProgram, parseOptions, withoutLeadingSeparators } from './program.js';
export type { CliLines } from './program.js';
export { processLines } from './broken-pipe.js';
export type { LineStream } from './broken-pipe.js';
export { refuseUnwritableExtension } from './extensions.js';
