import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ErrorCode, HsError, OK_VOID, err, ok, type Result } from '@hs/streams';
import { errnoCode, errnoErrorCode, loadIpcNative } from './ipc-native.js';
import { SharedSegment } from './shared-segment.js';

const TOPIC_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Longest Unix socket path Linux accepts (sun_path is 108 bytes with the NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Checks a topic name: 1..64 characters of `[A-Za-z0-9._-]`, not `.` or `..`.
 * @throws HsError `InvalidArgument` otherwise.
 */
export function checkTopicName(topic: unknown, who: string): string {
  if (typeof topic !== 'string' || !TOPIC_NAME.test(topic) || topic === '.' || topic === '..') {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: topic must be 1..64 characters of [A-Za-z0-9._-], got ${JSON.stringify(topic)}`);
  }
  return topic;
}

function currentUid(): number {
  return process.getuid?.() ?? 0;
}

/** `uid 1001 (alice)`: the uid, with its user name when /etc/passwd names it. */
function describeUid(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name !== undefined && name !== '' && Number(id) === uid) return `uid ${uid} (${name})`;
    }
  } catch {
    // No /etc/passwd to read: the number alone.
  }
  return `uid ${uid}`;
}

/**
 * The per-user directory topic sockets live in: `override`, else `$XDG_RUNTIME_DIR/hs-ipc` when
 * `XDG_RUNTIME_DIR` is set (a directory only this user can enter, so nobody else can take the name), else
 * `<tmpdir>/hs-ipc-<uid>`. Only that last level is created (mode 0700, one non-recursive `mkdir`); its
 * parent must already exist, so a parent that refuses children (a path under `/proc`) is an error, never
 * a hang. What can be repaired safely is: a default directory of this user whose mode is not 0700 is
 * `chmod`ed to 0700 (an `override` is the caller's and is only reported). Another user's directory (the
 * predictable `/tmp` name taken first) is never used; the error names the directory, its owner and the fix.
 *
 * @returns the directory, or `NotFound` when its parent does not exist (the message names the path and
 *   says to create the parent or set `XDG_RUNTIME_DIR` / `runtimeDirectory` to an existing place),
 *   `InvalidArgument` when the parent is not a directory, or `PermissionDenied` when the directory cannot
 *   be created or read, or is a symlink, not a directory, owned by another user (naming the owner and
 *   saying to set `XDG_RUNTIME_DIR` or pass `runtimeDirectory`), or (an `override`) open to group or others.
 *
 * @example
 * ```ts
 * import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { unwrap } from '@hs/streams';
 * import { topicDirectory } from '@hs/ipc';
 *
 * // topicDirectory() alone: $XDG_RUNTIME_DIR/hs-ipc, else <tmpdir>/hs-ipc-<uid>; here an application's own place
 * const base = mkdtempSync(join(tmpdir(), 'hs-app-'));
 * const dir = unwrap(topicDirectory(join(base, 'topics'))); // made with mode 0700
 * console.log(`topic sockets go to .../${dir.slice(base.length + 1)}: pass it as runtimeDirectory to both ends`);
 * chmodSync(dir, 0o755);
 * const shared = topicDirectory(dir); // others could reach the sockets now
 * if (!shared.ok) console.log(shared.error.message);
 * rmSync(base, { recursive: true, force: true });
 * ```
 */
export function topicDirectory(override?: string): Result<string> {
  const xdg = process.env['XDG_RUNTIME_DIR'];
  const dir = override ?? (xdg !== undefined && xdg !== '' ? join(xdg, 'hs-ipc') : join(tmpdir(), `hs-ipc-${currentUid()}`));
  const fix =
    override === undefined
      ? 'set XDG_RUNTIME_DIR to a directory of yours (mode 0700, for example /run/user/<uid>) or pass runtimeDirectory to every publisher and subscriber of the topic'
      : 'pass a runtimeDirectory of yours (mode 0700) to every publisher and subscriber of the topic';
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const parent = dirname(dir);
    const create = override === undefined ? 'create it or set XDG_RUNTIME_DIR to an existing directory' : 'create it or pass a runtimeDirectory whose parent exists';
    if (code === 'ENOENT') return err(ErrorCode.NotFound, `topic directory ${dir} cannot be created: its parent ${parent} does not exist or refuses new entries; ${create}`, cause);
    if (code === 'ENOTDIR') return err(ErrorCode.InvalidArgument, `topic directory ${dir} cannot be created: its parent ${parent} is not a directory; ${create}`, cause);
    if (code !== 'EEXIST') return err(ErrorCode.PermissionDenied, `topic directory ${dir} cannot be created: ${code ?? 'unknown error'}; ${fix}`, cause);
  }
  try {
    const info = lstatSync(dir);
    if (!info.isDirectory() || info.isSymbolicLink()) return err(ErrorCode.PermissionDenied, `topic directory ${dir} is not a plain directory (a symlink or a file took its name); remove it, or ${fix}`);
    if (info.uid !== currentUid()) {
      return err(
        ErrorCode.PermissionDenied,
        `topic directory ${dir} belongs to ${describeUid(info.uid)}, not this user (${describeUid(currentUid())}): another user took the name first, and hs never uses it; ${fix}`,
      );
    }
    const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
    if (override !== undefined && (info.mode & 0o077) !== 0) {
      return err(ErrorCode.PermissionDenied, `topic directory ${dir} has mode ${mode}; it must be 0700 (chmod 700 ${dir})`);
    }
    if (override === undefined && (info.mode & 0o777) !== 0o700) {
      // Ours, so only its mode is wrong (an older umask, a hand-made directory): repair it. Entries other
      // users put in it meanwhile stay harmless: every peer's uid is checked (SO_PEERCRED) before use.
      chmodSync(dir, 0o700);
    }
  } catch (cause) {
    return err(ErrorCode.PermissionDenied, `topic directory ${dir} cannot be read or repaired: ${(cause as NodeJS.ErrnoException).code ?? 'unknown error'}; ${fix}`, cause);
  }
  return ok(dir);
}

/** The socket path of `topic` in `dir`; `InvalidArgument` when it exceeds the 107-byte Unix socket limit. */
export function topicSocketPath(dir: string, topic: string): Result<string> {
  const path = join(dir, `${topic}.sock`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    return err(ErrorCode.InvalidArgument, `socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter topic or runtimeDirectory`);
  }
  return ok(path);
}

/** Segment name prefix of boundary pools this user's process `pid` creates: `/hs.<uid>.<pid>.` */
export function segmentPrefix(pid: number): string {
  return `/hs.${currentUid()}.${pid}.`;
}

/**
 * The liveness lock of this user's publisher process `pid`: the shm name `/hs.<uid>.lock.<pid>`. Not under
 * `segmentPrefix(pid)`, so a reaper of an older version (which removes every `hs.<uid>.<pid>.*` whose pid
 * `kill` cannot find) leaves it alone.
 */
export function livenessLockName(pid: number): string {
  return `/hs.${currentUid()}.lock.${pid}`;
}

/** The descriptor of this process's liveness lock once held; kept open until the process exits. */
let livenessFd: number | null = null;

/**
 * Takes this process's liveness lock (once; later calls return at once): a shared `flock` on
 * `livenessLockName(process.pid)` that the kernel holds until the process exits, however it exits. A
 * publisher takes it before it creates its first segment, so `reapStaleSegments` can tell that it is alive
 * even from another PID namespace, where its pid names another process or none. The lock's file is left
 * at exit (a publisher with the same pid in another namespace may share it); the next reaper removes it.
 * With an addon older than ABI 4 (no locks) it does nothing.
 * @returns nothing, or the error of the lock (`PermissionDenied` for another user's file, `ResourceExhausted`
 *   when a reaper held it for over a second, `OutOfMemory` when /dev/shm is full).
 */
export function holdPublisherLiveness(): Result<void> {
  if (livenessFd !== null) return OK_VOID;
  const native = loadIpcNative();
  if (!native.ok) return native;
  if (typeof native.value.holdLivenessLock !== 'function') return OK_VOID;
  const name = livenessLockName(process.pid);
  try {
    livenessFd = native.value.holdLivenessLock(name);
    return OK_VOID;
  } catch (thrown) {
    const code = errnoCode(thrown);
    return err(code === 'EAGAIN' ? ErrorCode.ResourceExhausted : errnoErrorCode(code), `publisher liveness lock ${name}: ${(thrown as Error).message}`, thrown);
  }
}

/**
 * Unlinks boundary-pool segments (and mailboxes) this user's crashed publishers left in /dev/shm (names
 * `hs.<uid>.<pid>.…`). A publisher is proven gone when its liveness lock (`livenessLockName(pid)`) can be
 * taken exclusively: no process holds it, in any PID namespace; its segments and the lock's file are then
 * removed while the lock is held. Segments without a lock file (a publisher of an older version) fall back
 * to `kill(pid, 0)`, which cannot see other PID namespaces. Returns how many segments were removed; 0 where
 * /dev/shm cannot be listed. Never touches segments of live publishers, of this process or of other users.
 *
 * @example
 * ```ts
 * import { spawnSync } from 'node:child_process';
 * import { existsSync } from 'node:fs';
 * import { unwrap } from '@hs/streams';
 * import { SharedSegment, ipcAvailability, reapStaleSegments } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   // a publisher of an older version crashed and left its named segment: /hs.<uid>.<pid>.<...>
 *   const gone = spawnSync(process.execPath, ['-e', '']).pid; // a process that has exited
 *   const name = `/hs.${process.getuid?.() ?? 0}.${gone}.camera`;
 *   unwrap(SharedSegment.create({ name, byteSize: 4096 })).close(); // unmapped; the name stays in /dev/shm
 *   const removed = reapStaleSegments(); // what TopicPublisher.create runs first; live publishers are left alone
 *   console.log(`reaped ${removed} stale segment(s); ${name} still in /dev/shm: ${existsSync(`/dev/shm${name}`)}`);
 * }
 * ```
 */
export function reapStaleSegments(): number {
  const native = loadIpcNative();
  if (!native.ok) return 0;
  let names: string[];
  try {
    names = readdirSync('/dev/shm');
  } catch {
    return 0;
  }
  const mine = `hs.${currentUid()}.`;
  const locks = `${mine}lock.`;
  const byPid = new Map<number, string[]>();
  const locked = new Set<number>();
  for (const name of names) {
    if (!name.startsWith(mine)) continue;
    const isLock = name.startsWith(locks);
    const pid = Number(isLock ? name.slice(locks.length) : name.slice(mine.length).split('.', 1)[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    if (isLock) locked.add(pid);
    if (!byPid.has(pid)) byPid.set(pid, []);
    if (!isLock) byPid.get(pid)!.push(name);
  }
  const n = native.value;
  let removed = 0;
  const unlinkAll = (segments: readonly string[]): void => {
    for (const name of segments) {
      const r = SharedSegment.unlinkName(`/${name}`);
      if (r.ok && r.value) removed++;
    }
  };
  for (const [pid, segments] of byPid) {
    const lock = livenessLockName(pid);
    if (locked.has(pid) && typeof n.tryReapLock === 'function' && typeof n.releaseReapLock === 'function') {
      let fd: number;
      try {
        fd = n.tryReapLock(lock);
      } catch {
        continue; // another user's lock file, or unreadable: leave everything of that pid alone
      }
      if (fd === -1) continue; // a live publisher holds it
      if (fd >= 0) {
        unlinkAll(segments);
        try {
          n.releaseReapLock(lock, fd);
        } catch {
          // Removed meanwhile by another reaper.
        }
        continue;
      }
      // -2: the lock's file went away meanwhile; judge by the pid as for an older publisher.
    }
    if (segments.length === 0 || n.processAlive(pid)) continue;
    unlinkAll(segments);
  }
  return removed;
}

/** `<topic>.<publisher pid>.<16 hex token>.pub|sub`: the doorbell FIFOs of a topic mailbox. */
const DOORBELL_NAME = /^[A-Za-z0-9._-]{1,64}\.(\d{1,10})\.[0-9a-f]{16}\.(pub|sub)$/;

/**
 * Unlinks mailbox doorbell FIFOs in the topic directory `dir` whose publisher process (the pid in the name)
 * is gone. Only publishers before IPC addon ABI 6 named their doorbells (a crash between offering a mailbox and
 * the subscriber's ATTACH left them); today's doorbells are anonymous pipes passed with HELLO, so this only clears
 * what such an older publisher left. `TopicPublisher.create` calls it for its directory.
 * Only FIFOs of this user are touched. Returns how many were removed; 0 without the addon or when `dir`
 * cannot be listed. Spec: "Crossing process boundaries: the generation fence" (what a crashed process leaves
 * behind is reclaimed, never reused).
 *
 * @example
 * ```ts
 * import { execFileSync, spawnSync } from 'node:child_process';
 * import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { unwrap } from '@hs/streams';
 * import { ipcAvailability, reapStaleDoorbells, topicDirectory } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const dir = unwrap(topicDirectory(join(mkdtempSync(join(tmpdir(), 'hs-app-')), 'topics')));
 *   // an older publisher (named FIFO doorbells) crashed between offering a mailbox and the subscriber's ATTACH
 *   const gone = spawnSync(process.execPath, ['-e', '']).pid; // a process that has exited
 *   execFileSync('mkfifo', ['-m', '600', join(dir, `camera.${gone}.00112233aabbccdd.pub`)]);
 *   const removed = reapStaleDoorbells(dir); // TopicPublisher.create sweeps its topic directory the same way
 *   console.log(`removed ${removed} stale doorbell(s); entries left: ${readdirSync(dir).length}`);
 *   rmSync(join(dir, '..'), { recursive: true, force: true });
 * }
 * ```
 */
export function reapStaleDoorbells(dir: string): number {
  const native = loadIpcNative();
  if (!native.ok) return 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = DOORBELL_NAME.exec(name);
    if (match === null) continue;
    const pid = Number(match[1]);
    if (pid <= 0 || native.value.processAlive(pid)) continue;
    const path = join(dir, name);
    try {
      const info = lstatSync(path);
      if (!info.isFIFO() || info.uid !== currentUid()) continue;
      unlinkSync(path);
      removed++;
    } catch {
      // Gone meanwhile (another publisher reaped it).
    }
  }
  return removed;
}
