import { existsSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { ErrorCode, OK_VOID, err, ok, type Result } from '@hs/streams';
import { topicDirectory, topicSocketPath } from './topic-endpoint.js';

/** Where a publisher serves its topic: the runtime directory and the socket path in it. */
export interface TopicSocketClaim {
  readonly directory: string;
  readonly socketPath: string;
}

/**
 * Finds the topic's socket path (in `runtimeDirectory`, default the per-user runtime directory) and makes
 * sure it is free for a new publisher: a socket a live publisher answers on is `AlreadyExists`; a stale one
 * (its publisher crashed) is removed (`PermissionDenied` when it cannot be). `topicDirectory`'s and
 * `topicSocketPath`'s errors otherwise (`NotFound`, `PermissionDenied`, `InvalidArgument`).
 */
export async function claimTopicSocket(runtimeDirectory: string | undefined, topic: string): Promise<Result<TopicSocketClaim>> {
  const directory = topicDirectory(runtimeDirectory);
  if (!directory.ok) return directory;
  const socketPath = topicSocketPath(directory.value, topic);
  if (!socketPath.ok) return socketPath;
  const free = await claimSocketPath(socketPath.value, topic);
  if (!free.ok) return free;
  return ok({ directory: directory.value, socketPath: socketPath.value });
}

/**
 * Cleanup hooks of every live publisher of this process, run by one shared `exit` listener: ten or more
 * publishers each adding their own listener tripped Node's MaxListenersExceededWarning. The listener is
 * installed with the first hook and removed with the last; a hook that throws does not stop the others.
 */
const exitHooks = new Set<() => void>();

function runExitHooks(): void {
  for (const hook of exitHooks) {
    try {
      hook();
    } catch {
      // The process is exiting: nothing can be reported; the other publishers still clean up.
    }
  }
}

/** Runs every publisher's cleanup hook now (the names of this process's topics), as the `exit` listener would. @internal */
export function runIpcExitHooks(): void {
  runExitHooks();
}

/** Adds a hook run when the process exits (`process.on('exit')`, one listener for all of them). */
export function addExitHook(hook: () => void): void {
  if (exitHooks.size === 0) process.on('exit', runExitHooks);
  exitHooks.add(hook);
}

/** Removes a hook of `addExitHook` (idempotent); the shared listener goes with the last one. */
export function removeExitHook(hook: () => void): void {
  if (exitHooks.delete(hook) && exitHooks.size === 0) process.off('exit', runExitHooks);
}

/** Hooks registered now (for tests). @internal */
export function exitHookCount(): number {
  return exitHooks.size;
}

/**
 * A publisher's listening topic socket: the server on the claimed path, the process `exit` hook that
 * removes the path (and whatever else the publisher names) when the process ends without `close()`, and
 * `close()`, which stops listening and removes the path.
 */
export class TopicSocket {
  #onExit: (() => void) | null = null;

  private constructor(
    private readonly server: Server,
    /** The socket path subscribers connect to. */
    readonly socketPath: string,
  ) {}

  /** Listens on the claimed `socketPath`; `AlreadyExists` when another process took the path meanwhile. */
  static async listen(socketPath: string, topic: string): Promise<Result<TopicSocket>> {
    const server = createServer({ pauseOnConnect: false });
    const listening = await new Promise<Result<void>>((resolve) => {
      server.once('error', (cause) => resolve(err(ErrorCode.AlreadyExists, `topic ${topic}: cannot listen on ${socketPath}: ${cause.message}`, cause)));
      server.listen(socketPath, () => resolve(OK_VOID));
    });
    return listening.ok ? ok(new TopicSocket(server, socketPath)) : listening;
  }

  /**
   * Hands every new connection to `onConnection`, and installs the exit hook: `beforeExit` (the publisher's
   * own names: a segment, mailboxes), then the socket path is removed. Call it once. The hook joins the
   * module's one `exit` listener (`addExitHook`), so any number of publishers add one listener in all.
   */
  serve(onConnection: (socket: Socket) => void, beforeExit: () => void = () => undefined): void {
    this.server.on('connection', onConnection);
    this.#onExit = () => {
      beforeExit();
      removeSocketFile(this.socketPath);
    };
    addExitHook(this.#onExit);
  }

  /** Removes the exit hook, stops listening (resolves once the server closed) and removes the socket path. */
  async close(): Promise<void> {
    if (this.#onExit !== null) removeExitHook(this.#onExit);
    this.#onExit = null;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    removeSocketFile(this.socketPath);
  }
}

function removeSocketFile(socketPath: string): void {
  if (existsSync(socketPath)) unlinkSync(socketPath);
}

/**
 * Makes `path` free for a new publisher. Only a socket nobody listens on (connect fails with ECONNREFUSED, or
 * the path is not a socket) is stale and removed; a listener that answers, or whose backlog is full
 * (EAGAIN), is a live publisher (`AlreadyExists`); any other failure to probe is `PermissionDenied` naming
 * the code, and the path is left alone.
 */
async function claimSocketPath(path: string, topic: string): Promise<Result<void>> {
  if (!existsSync(path)) return OK_VOID;
  const probe = await new Promise<'live' | string>((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve('live');
    });
    socket.once('error', (cause: NodeJS.ErrnoException) => resolve(cause.code ?? cause.message));
  });
  if (probe === 'live') return err(ErrorCode.AlreadyExists, `topic ${topic} is already published (a live publisher answers on ${path})`);
  if (probe === 'EAGAIN') return err(ErrorCode.AlreadyExists, `topic ${topic} is already published (a live publisher listens on ${path}; its connection backlog is full)`);
  if (probe === 'ENOENT') return OK_VOID; // removed meanwhile
  if (probe !== 'ECONNREFUSED' && probe !== 'ENOTSOCK') {
    return err(ErrorCode.PermissionDenied, `topic ${topic}: cannot tell whether ${path} belongs to a live publisher (${probe}); remove it if no publisher of the topic runs`);
  }
  try {
    unlinkSync(path);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return OK_VOID;
    return err(ErrorCode.PermissionDenied, `topic ${topic}: the stale socket ${path} cannot be removed: ${(cause as Error).message}`, cause);
  }
  return OK_VOID;
}
