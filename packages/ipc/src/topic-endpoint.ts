import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ErrorCode, HsError, err, ok, type Result } from '@hs/streams';
import { loadIpcNative } from './ipc-native.js';
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
 * Unlinks boundary-pool segments this user's crashed publishers left in /dev/shm (names
 * `hs.<uid>.<pid>.…` whose pid is no longer alive). Returns how many were removed; 0 where /dev/shm
 * cannot be listed. Never touches segments of live processes or other users.
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
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(mine)) continue;
    const pid = Number(name.slice(mine.length).split('.', 1)[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || native.value.processAlive(pid)) continue;
    const r = SharedSegment.unlinkName(`/${name}`);
    if (r.ok && r.value) removed++;
  }
  return removed;
}

/** `<topic>.<publisher pid>.<16 hex token>.pub|sub`: the doorbell FIFOs of a topic mailbox. */
const DOORBELL_NAME = /^[A-Za-z0-9._-]{1,64}\.(\d{1,10})\.[0-9a-f]{16}\.(pub|sub)$/;

/**
 * Unlinks mailbox doorbell FIFOs in the topic directory `dir` whose publisher process (the pid in the name)
 * is gone: a publisher that crashed between offering a mailbox and the subscriber's ATTACH leaves them.
 * Only FIFOs of this user are touched. Returns how many were removed; 0 without the addon or when `dir`
 * cannot be listed. Spec: "Crossing process boundaries: the generation fence" (what a crashed process leaves
 * behind is reclaimed, never reused).
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
