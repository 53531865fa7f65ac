import { closeSync } from 'node:fs';
import { Socket } from 'node:net';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { errnoCode, errnoErrorCode, loadIpcNative } from './ipc-native.js';
import type { ReceivedMailbox } from './mailbox/topic-mailbox.js';
import { FRAME_BYTES } from './wire/frame-layout.js';

/**
 * Wire version 2 passes a host topic's shared memory as descriptors (SCM_RIGHTS) on its HELLO, which Node's
 * sockets can neither send nor receive: the addon sends HELLO with them (one non-blocking sendmsg, before any
 * other write on the connection) and receives it (connect and recvmsg on a worker thread, reading exactly the
 * HELLO's bytes), then hands the connected socket to Node. docs/ipc-wire-protocol.md, "Passing the segments".
 */

/** A subscriber's connection once the HELLO arrived: the socket (handed to Node), the frame, its descriptors. */
export interface ReceivedHello {
  readonly socket: Socket;
  readonly frame: Buffer;
  /** The descriptors that came with HELLO: the caller's to close (`closeDescriptors`) once mapped or refused. */
  readonly fds: readonly number[];
}

/** Closes received descriptors (a refused HELLO's, or once mapped). */
export function closeDescriptors(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/**
 * Connects to a topic socket and receives its HELLO with the descriptors it carries, without blocking the JS
 * thread. `NotFound` when nobody publishes the topic, the connection closed before a whole HELLO, or none came
 * within `timeoutMs`; `ProtocolError` for more descriptors than a HELLO may carry or ones after its first
 * byte; `NotSupported` with an addon older than ABI 5.
 */
export async function receiveHello(path: string, topic: string, timeoutMs: number): Promise<Result<ReceivedHello>> {
  const native = loadIpcNative();
  if (!native.ok) return native;
  const connect = native.value.connectAndReceive;
  if (typeof connect !== 'function') return err(ErrorCode.NotSupported, 'the @hs/ipc addon is older than ABI 5 (it cannot receive wire version 2 HELLOs); rebuild it (npx hs-build-addon ipc)');
  let received: { fd: number; frame: Buffer; fds: number[] };
  try {
    received = await connect(path, FRAME_BYTES, Math.max(1, Math.ceil(timeoutMs)));
  } catch (thrown) {
    const code = errnoCode(thrown);
    switch (code) {
      case 'ETIMEDOUT':
        return err(ErrorCode.NotFound, `topic ${topic}: no HELLO from the publisher within ${Math.round(timeoutMs)} ms`, thrown);
      case 'ECONNRESET':
        return err(ErrorCode.NotFound, `topic ${topic}: the publisher closed the connection before its HELLO (too many subscribers?)`, thrown);
      case 'ENOENT':
      case 'ECONNREFUSED':
        return err(ErrorCode.NotFound, `topic ${topic} is not published (${code} on ${path})`, thrown);
      case 'EPROTO':
        return err(ErrorCode.ProtocolError, `topic ${topic}: the publisher's HELLO carried descriptors this side refuses (more than a HELLO may carry, or after its first byte)`, thrown);
      default:
        return err(errnoErrorCode(code), `topic ${topic}: ${(thrown as Error).message}`, thrown);
    }
  }
  let socket: Socket;
  try {
    socket = new Socket({ fd: received.fd, readable: true, writable: true });
  } catch (cause) {
    closeDescriptors([received.fd, ...received.fds]);
    return err(ErrorCode.InvalidState, `topic ${topic}: the connected socket cannot be handed to Node: ${(cause as Error).message}`, cause);
  }
  return ok({ socket, frame: received.frame, fds: received.fds });
}

/**
 * Sends a publisher's HELLO on a freshly accepted connection, with `fds` as SCM_RIGHTS (none: an ordinary
 * write). Nothing else may have been written on it yet, so the frame stays first. False when it cannot be
 * sent (the caller drops the connection).
 */
export function sendHello(socket: Socket, frame: Buffer, fds: readonly number[]): boolean {
  if (fds.length === 0) {
    socket.write(frame);
    return true;
  }
  const native = loadIpcNative();
  const send = native.ok ? native.value.sendWithDescriptors : undefined;
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (send === undefined || typeof fd !== 'number' || fd < 0) return false;
  let sent: number;
  try {
    sent = send(fd, frame, fds);
  } catch {
    return false;
  }
  // The descriptors went with the first byte; the rest of the frame (the kernel took less) goes after it.
  if (sent < frame.length) socket.write(frame.subarray(sent));
  return true;
}

/**
 * Checks that a HELLO came with `expected` descriptors (a device topic's none; a host topic's, see
 * `hostHelloDescriptors`). `ProtocolError` otherwise.
 */
export function checkHelloDescriptors(topic: string, fds: readonly number[], expected: number, what: string): Result<void> {
  if (fds.length === expected) return ok(undefined);
  return err(
    ErrorCode.ProtocolError,
    `topic ${topic}: the HELLO came with ${fds.length} descriptors, expected ${expected} (${what}); wire version 2 passes a host topic's shared memory with its HELLO`,
  );
}

/** A host topic's descriptors from HELLO: the data segment and, with MAILBOX_OFFERED, the mailbox's three. */
export interface HostHelloDescriptors {
  readonly segment: number;
  readonly mailbox: ReceivedMailbox | null;
}

/**
 * Sorts a host topic's HELLO descriptors (wire version 2, in order: the data segment; with MAILBOX_OFFERED the
 * mailbox segment, the subscriber's doorbell read end, the publisher's doorbell write end). `ProtocolError`
 * for another count. The descriptors stay the caller's.
 */
export function hostHelloDescriptors(topic: string, fds: readonly number[], mailboxOffered: boolean): Result<HostHelloDescriptors> {
  const expected = checkHelloDescriptors(topic, fds, mailboxOffered ? 4 : 1, mailboxOffered ? 'the data segment, the offered mailbox and its two doorbell ends' : 'the data segment');
  if (!expected.ok) return expected;
  const [segment, mailbox, ownBell, peerBell] = fds as [number, number?, number?, number?];
  return ok({ segment, mailbox: mailboxOffered ? { segment: mailbox as number, ownBell: ownBell as number, peerBell: peerBell as number } : null });
}
