import { readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { loadIpcNative } from './ipc-native.js';

/** Who is on the other end of a connected topic socket. */
export interface SocketPeer {
  readonly uid: number;
  readonly pid: number;
}

/**
 * The kernel's record of the peer of a connected Unix socket (SO_PEERCRED), checked to be this user:
 * `PermissionDenied` for another uid, `NotSupported` without the addon or where the socket has no
 * file descriptor.
 */
export function checkedSocketPeer(socket: Socket): Result<SocketPeer> {
  const native = loadIpcNative();
  if (!native.ok) return native;
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return err(ErrorCode.NotSupported, 'the topic socket exposes no file descriptor, so its peer cannot be checked');
  let peer: { uid: number; pid: number };
  try {
    peer = native.value.peerCredentials(fd);
  } catch (cause) {
    return err(ErrorCode.PermissionDenied, `the peer of the topic socket cannot be identified: ${(cause as Error).message}`, cause);
  }
  const uid = process.getuid?.() ?? 0;
  if (peer.uid !== uid) return err(ErrorCode.PermissionDenied, `the topic socket's peer (pid ${peer.pid}) runs as uid ${peer.uid}, not this user (${uid})`);
  return ok({ uid: peer.uid, pid: peer.pid });
}

/** True when a process with this id exists; false without the addon. */
export function processAlive(pid: number): boolean {
  const native = loadIpcNative();
  return native.ok && native.value.processAlive(pid);
}

/**
 * Whether the process `peerPid` (a pid as this process sees it, from SO_PEERCRED) lives in another PID
 * namespace than this one: true for pid 0 (the kernel reports 0 for a peer whose pid has no number here, a
 * process of a parent or sibling namespace) or when `/proc/<pid>/ns/pid` names another namespace than
 * `/proc/self/ns/pid`; false when both name the same; null when that cannot be read (no /proc, another
 * user's process under a restrictive `hidepid`).
 */
export function inOtherPidNamespace(peerPid: number): boolean | null {
  if (peerPid === 0) return true;
  try {
    return readlinkSync(`/proc/${peerPid}/ns/pid`) !== readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

/**
 * Checks the pid a HELLO names against the socket's peer: equal, or the peer is in another PID namespace,
 * where the publisher knows itself by another number (its own namespace's, which its segment names carry),
 * so the HELLO's pid is taken. `ProtocolError` when they differ within one namespace, or when the namespace
 * cannot be checked (the message says why).
 */
export function checkHelloPid(topic: string, helloPid: number, peerPid: number): Result<void> {
  if (helloPid === peerPid) return ok(undefined);
  const other = inOtherPidNamespace(peerPid);
  if (other === true) return ok(undefined);
  const why =
    other === null
      ? `; /proc/${peerPid}/ns/pid cannot be read, so it cannot be checked whether the publisher runs in another PID namespace (where its pid differs)`
      : ' in the same PID namespace';
  return err(ErrorCode.ProtocolError, `topic ${topic}: HELLO names pid ${helloPid}, but the socket's peer is pid ${peerPid}${why}`);
}
