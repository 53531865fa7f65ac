import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CliIo, type ProgressStream, runHs } from '../src/index.js';

export const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const FIXTURE = join(PACKAGE_DIR, 'test', 'fixtures', 'counting-pipeline.mjs');
export const BIN = join(PACKAGE_DIR, 'dist', 'bin.js');

/** What a command printed and returned. */
export interface HsOutcome {
  readonly exitCode: number;
  readonly out: string[];
  readonly err: string[];
}

/** Options of `hs()`: a progress terminal, the environment, the directory, a Ctrl-C trigger. */
export interface HsOptions {
  readonly progress?: ProgressStream | null;
  readonly env?: Record<string, string | undefined>;
  readonly cwd?: string;
  /** Receives the interrupt handler `hs run` registers, to press Ctrl-C from the test. */
  readonly onInterrupt?: (press: () => void) => void;
}

/** Runs `hs` in-process and collects its lines. */
export async function hs(args: readonly string[], options: HsOptions = {}): Promise<HsOutcome> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    progress: options.progress ?? null,
    env: options.env ?? { HS_BACKEND: 'host' },
    cwd: options.cwd ?? PACKAGE_DIR,
    onInterrupt: (handler) => {
      options.onInterrupt?.(handler);
      return () => undefined;
    },
  };
  const exitCode = await runHs(args, io);
  return { exitCode, out, err };
}

/** A fake terminal that keeps everything written to it. */
export class FakeTerminal implements ProgressStream {
  readonly isTTY = true;
  readonly columns = 160;
  text = '';
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** Spawns the built `hs` bin; `whenOutput` sees each stdout chunk (with the child, to signal it). */
export function spawnHs(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; whenOutput?: (text: string, signal: (name: NodeJS.Signals) => void) => void } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? PACKAGE_DIR,
      env: { ...process.env, HS_BACKEND: 'host', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      options.whenOutput?.(stdout, (name) => child.kill(name));
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}
