import { Command, CommanderError } from 'commander';
import { CliExit, type CliExitValue, usageHint } from './messages.js';

/** Where a command line prints: one call per line, without the trailing newline. */
export interface CliLines {
  readonly log: (line: string) => void;
  readonly error: (line: string) => void;
}

/**
 * A commander program that follows the convention: it throws instead of exiting, prints help to
 * `output.log`, prints its own usage errors as `<program>: <message>` with the hint line to `output.error`.
 * Subcommands added with `.command()` inherit all of it.
 */
export function createProgram(name: string, description: string, output: CliLines): Command {
  return new Command(name)
    .description(description)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.log(text.replace(/\n$/, '')),
      writeErr: (text) => output.error(text.replace(/\n$/, '')),
      outputError: (text, write) => write(`${name}: ${text.replace(/^error: /, '')}`),
    })
    .showHelpAfterError(usageHint(name));
}

/** Drops the `--` a package manager passes through in front of the arguments (`pnpm run start -- --input x`). */
export function withoutLeadingSeparators(args: readonly string[]): string[] {
  let first = 0;
  while (args[first] === '--') first += 1;
  return args.slice(first);
}

/**
 * Parses `args` (without `node` and the script) for a program that takes no operands: every standalone
 * `--` is accepted and dropped.
 * @returns `null` when the options were parsed (read them with `program.opts()`), else the exit code to
 *   stop with after commander answered: `CliExit.Success` for `--help`, `CliExit.Usage` for a usage error
 *   (already printed).
 * @example
 * ```ts
 * const output = processLines();
 * const program = createProgram('my-example', 'What it does.', output).option('--frames <n>', 'frames', '8');
 * const exitCode = parseOptions(program, process.argv.slice(2)); // `-- --frames 3` works too
 * if (exitCode !== null) process.exitCode = exitCode;
 * else {
 *   const frames = parseNumberOption('--frames', program.opts<{ frames: string }>().frames, { min: 1, max: 100, integer: true });
 *   if (!frames.ok) {
 *     for (const line of errorLines('my-example', frames.error.message, usageHint('my-example'))) output.error(line);
 *     process.exitCode = CliExit.Usage;
 *   }
 * }
 * ```
 */
export function parseOptions(program: Command, args: readonly string[]): CliExitValue | null {
  try {
    program.parse(args.filter((arg) => arg !== '--'), { from: 'user' });
    return null;
  } catch (thrown) {
    if (thrown instanceof CommanderError) return commanderExit(thrown);
    throw thrown;
  }
}

/** The exit code for an error commander threw under `exitOverride()`: 0 for help and version, else `CliExit.Usage`. */
export function commanderExit(error: CommanderError): CliExitValue {
  return error.exitCode === 0 ? CliExit.Success : CliExit.Usage;
}
