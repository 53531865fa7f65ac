import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostilePeerReport } from './hostile-peer.js';
import type { TopicRunReport } from './topic-graphs.js';

/**
 * The command that runs the script `name` (`topic-process`, `hostile-peer`): its bundle next to this module
 * on the GPU machine (the suites are bundled there and there is no tsx), else the TypeScript source beside
 * it through tsx.
 */
function scriptCommand(name: string): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const bundled = join(here, `${name}.mjs`);
  if (existsSync(bundled)) return [bundled];
  return ['--import', 'tsx', join(here, `${name}.ts`)];
}

/** A running side of the cross-process run and the report it prints when it exits. */
export interface TopicChild {
  readonly process: ChildProcess;
  /** Resolves with the parsed report (or a failure report built from stderr and the exit status). */
  readonly report: Promise<TopicRunReport>;
  /** Resolves when the child printed a line containing `text` (a consumer's `progress N`), or when it exits. */
  printed(text: string): Promise<void>;
}

/** Starts `topic-process <role> ...args` as a child Node process. */
export function spawnTopicChildFor(role: 'producer' | 'consumer', args: readonly string[]): TopicChild {
  const child = spawn(process.execPath, [...scriptCommand('topic-process'), role, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const watchers: { text: string; resolve: () => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const w of watchers.splice(0)) {
      if (stdout.includes(w.text)) w.resolve();
      else watchers.push(w);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const report = new Promise<TopicRunReport>((resolve) => {
    child.on('close', (code, signal) => {
      for (const w of watchers.splice(0)) w.resolve();
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as TopicRunReport);
      } catch {
        resolve({ ok: false, error: `child exited (${signal ?? code}) without a report: ${stderr.slice(-2000)}`, frames: 0, badBytes: 0, slotsOut: -1, elapsedMs: 0 });
      }
    });
  });
  const printed = (text: string): Promise<void> =>
    stdout.includes(text) || child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => watchers.push({ text, resolve }));
  return { process: child, report, printed };
}

/** A running hostile peer (`hostile-peer`): `stop()` ends it and resolves with what it did. */
export interface HostilePeerChild {
  /** Resolves once the child is up and attacking (or has exited). */
  readonly started: Promise<void>;
  stop(): Promise<HostilePeerReport>;
}

/** Starts the hostile peer against the host topic at `socketPath` whose publisher is process `publisherPid`. */
export function spawnHostilePeer(socketPath: string, publisherPid: number, connections: number): HostilePeerChild {
  const child = spawn(process.execPath, [...scriptCommand('hostile-peer'), '--socket', socketPath, '--publisher-pid', String(publisherPid), '--connections', String(connections)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const started = new Promise<void>((resolve) => {
    child.stdout?.on('data', () => stdout.includes('started') && resolve());
    void closed.then(resolve);
  });
  return {
    started,
    stop: async () => {
      child.kill('SIGTERM');
      await closed;
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        return JSON.parse(line) as HostilePeerReport;
      } catch {
        throw new Error(`the hostile peer exited without a report: ${stderr.slice(-2000)}`);
      }
    },
  };
}
