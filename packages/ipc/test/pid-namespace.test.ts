import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@hs/streams';
import { ipcAvailability } from '../src/index.js';
import { checkHelloPid, inOtherPidNamespace } from '../src/socket-peer.js';

const producer = fileURLToPath(new URL('./fixtures/pid-namespace-producer.ts', import.meta.url));
const subscriber = fileURLToPath(new URL('./fixtures/pid-namespace-subscriber.ts', import.meta.url));
/** The uid both sides of the namespace test run as (nobody). */
const NOBODY = 65534;

/** Why the namespace test cannot run here, or null when `unshare -p -f --mount-proc` works. */
function unshareUnavailable(): string | null {
  if (!ipcAvailability().available) return 'the IPC addon is not built';
  if (process.platform !== 'linux') return 'PID namespaces are Linux only';
  const probe = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error !== undefined) return `unshare is not available (${probe.error.message})`;
  if (probe.status !== 0) return `unshare -p -f --mount-proc is refused here (needs root or user namespaces: ${probe.stderr.trim()})`;
  if (process.getuid?.() !== 0) return 'the test runs both sides as uid 65534 (setpriv), which needs root';
  if (spawnSync('setpriv', ['--version']).status !== 0) return 'setpriv (util-linux) is not available';
  // The Node binary may lie under a folder only root can enter (a private temporary prefix).
  const asNobody = spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'sh', '-c', '"$0" --version', process.execPath], { timeout: 10_000 });
  if (asNobody.status !== 0) return `uid ${NOBODY} cannot run this Node binary (${process.execPath})`;
  return null;
}
const skipReason = unshareUnavailable();

describe('HELLO pid checks across PID namespaces', () => {
  it('accepts a HELLO pid that differs from the peer only for a peer in another PID namespace', () => {
    expect(checkHelloPid('t', 5, 5).ok).toBe(true);
    expect(inOtherPidNamespace(process.pid)).toBe(false);
    // Pid 0: a peer whose pid has no number in this namespace (a parent or sibling namespace).
    expect(inOtherPidNamespace(0)).toBe(true);
    expect(checkHelloPid('t', 1, 0).ok).toBe(true);
    const same = checkHelloPid('t', process.pid + 1, process.pid);
    expect(same.ok ? null : same.error.code).toBe(ErrorCode.ProtocolError);
    expect(same.ok ? '' : same.error.message).toContain('in the same PID namespace');
    const unreadable = checkHelloPid('t', 7, 2 ** 22 + 1); // no such process: its namespace cannot be read
    expect(unreadable.ok ? '' : unreadable.error.message).toContain('cannot be read');
  });
});

describe.skipIf(skipReason !== null)(`a publisher in another PID namespace (unshare -p)${skipReason === null ? '' : ` [skipped: ${skipReason}]`}`, () => {
  it('is connected to despite the HELLO pid, and its live segments survive the reaper until it dies', async () => {
    // Both sides run as an otherwise unused uid, so reapers of other test runs on this machine (their own
    // uid's names only) never touch the names under test.
    const home = mkdtempSync(join(tmpdir(), 'hs-ipc-pidns-'));
    chownSync(home, NOBODY, NOBODY);
    chmodSync(home, 0o700);
    const asNobody = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
    // sh is the namespace's pid 1 and forks 150 times first, so the publisher's own pid (about 152) is one
    // this namespace most likely has no process for: kill(pid, 0) here cannot prove it alive.
    const script = 'i=0; while [ $i -lt 150 ]; do /bin/true; i=$((i+1)); done; "$0" "$@"';
    const child = spawn('unshare', ['-p', '--kill-child', '--mount-proc', 'setpriv', ...asNobody, 'sh', '-c', script, process.execPath, '--import', 'tsx', producer, home, 'pidns'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      // Its own process group: setpriv's uid change clears --kill-child's death signal, so the namespace is
      // ended by killing the whole group.
      detached: true,
    });
    const killAll = (): void => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const helper = (...args: string[]): Record<string, unknown> => {
      const run = spawnSync('setpriv', [...asNobody, process.execPath, '--import', 'tsx', subscriber, ...args], { encoding: 'utf8', timeout: 30_000 });
      if (run.status !== 0) throw new Error(`helper ${args[0]} failed (${run.status}): ${run.stderr}`);
      return JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    };
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        child.once('exit', (code) => reject(new Error(`the namespaced publisher exited (${code}) before listening`)));
      });
      const nsPid = (JSON.parse(line) as { pid: number }).pid;
      const attached = helper('attach', home, 'pidns', String(nsPid));
      const lock = `hs.${NOBODY}.lock.${nsPid}`;
      expect(attached['before']).toContain(lock);
      // Wire version 2: the boundary segment is a sealed memfd without a name, so the lock is the publisher's
      // only /dev/shm name (what an earlier publisher of the same pid left may be there too).
      // The reaper left the live publisher's names alone, however kill(nsPid, 0) answered here.
      expect(attached['after']).toEqual(attached['before']);
      expect(attached).toMatchObject({ producerPid: nsPid, value: 7 });

      // Once it is gone the lock is free: its segment and the lock's file are removed.
      const exited = new Promise((resolve) => child.once('exit', resolve));
      killAll();
      await exited;
      // The publisher itself (a member of the group) may outlive unshare by a moment: the reaper waits.
      expect(helper('reap', String(nsPid))).toEqual({ left: [] });
    } finally {
      killAll();
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});
