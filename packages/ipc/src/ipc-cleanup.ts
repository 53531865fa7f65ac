import { runIpcExitHooks } from './publisher-socket.js';

/** The signals `installIpcCleanup` handles unless told otherwise. */
const DEFAULT_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * Opt-in cleanup for processes that end by a signal. The library installs no signal handler of its own: a
 * publisher removes its names (the topic socket; segments and doorbells have none) in `close()`
 * and in a process `exit` hook, but Node runs no `exit` listener when a signal's default action kills the
 * process (Ctrl-C, `kill`). `installIpcCleanup()` adds one listener per signal that removes those names and
 * then re-raises the signal with its default action, so the process still dies of it (exit status 130 for
 * SIGINT in a shell) and nothing else changes. Since wire version 2 the shared memory has no name: the
 * kernel frees it with the last process that maps it, however they end.
 *
 * Call it once in a program's entry point (the examples do), not in a library. It returns a function that
 * removes the listeners again. A process that installs its own handlers for these signals should call
 * `close()` on its publishers there instead.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, MemoryKind } from '@hs/streams';
 * import { TopicPublisher, installIpcCleanup, ipcAvailability } from '@hs/ipc';
 *
 * // once, in the program's entry point: Ctrl-C and SIGTERM remove the topic socket, then exit as the signal would
 * const uninstall = installIpcCleanup();
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
 *   const pub = await TopicPublisher.create({ backend: new HostBackend(), topic: 'camera', memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 64, maxRank: 1, runtimeDirectory });
 *   console.log(`serving topic ${pub.topic}; SIGINT and SIGTERM listeners: ${process.listenerCount('SIGINT')}, ${process.listenerCount('SIGTERM')}`);
 *   await pub.close(); // the orderly way out removes the socket too
 *   rmSync(runtimeDirectory, { recursive: true, force: true });
 * }
 * uninstall(); // takes the listeners back (a test or a program that installs its own handlers)
 * ```
 */
export function installIpcCleanup(signals: readonly NodeJS.Signals[] = DEFAULT_SIGNALS): () => void {
  const installed: [NodeJS.Signals, () => void][] = [];
  const uninstall = (): void => {
    for (const [signal, listener] of installed.splice(0)) process.off(signal, listener);
  };
  for (const signal of signals) {
    const listener = (): void => {
      runIpcExitHooks();
      uninstall();
      // With no listener left (unless the program has its own), the signal's default action ends the process.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, listener);
    installed.push([signal, listener]);
  }
  return uninstall;
}
