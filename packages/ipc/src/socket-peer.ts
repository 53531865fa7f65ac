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
