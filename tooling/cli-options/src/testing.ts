import { spawn } from 'node:child_process';

/** What a spawned command line did. */
export interface ProgramOutcome {
  /** Exit status, or `null` when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Standard output read before it closed (or before the test closed its end). */
  readonly stdout: string;
  readonly stderr: string;
}

/** How `spawnProgram` runs the entry point. */
export interface SpawnOptions {
  /** Working directory; default the test's. */
  readonly cwd?: string;
  /** Variables added to (or, `undefined`, removed from) the test's environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Closes the test's end of standard output once this many lines arrived (0: at once, before the program
   * writes anything), so that the program's later writes meet a broken pipe, as under `| head`.
   */
  readonly closeStdoutAfterLines?: number;
}

/**
 * Runs a built entry point (`dist/bin.js`, `dist/main.js`) with the test's Node, standard input closed,
 * standard output and error piped, and collects what it printed: the tests of hs's command-line
 * convention run the binaries users run, not the functions behind them.
 */
export function spawnProgram(entry: string, args: readonly string[], options: SpawnOptions = {}): Promise<ProgramOutcome> {
  return new Promise((done, fail) => {
    const env: Record<string, string | undefined> = { ...process.env, ...options.env };
    for (const [name, value] of Object.entries(options.env ?? {})) if (value === undefined) delete env[name];
    const child = spawn(process.execPath, [entry, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const closeAfter = options.closeStdoutAfterLines;
    if (closeAfter === 0) child.stdout.destroy();
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (closeAfter !== undefined && stdout.split('\n').length > closeAfter) child.stdout.destroy();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}
