import { runIpcExitHooks } from './publisher-socket.js';

/** The signals `installIpcCleanup` handles unless told otherwise. */
const DEFAULT_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * Opt-in cleanup for processes that end by a signal. The library installs no signal handler of its own: a
 * publisher removes its names (the topic socket, the doorbells of mailboxes not attached yet) in `close()`
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
 * import { installIpcCleanup, TopicPublisher } from '@hs/ipc';
 * installIpcCleanup(); // Ctrl-C removes the topic socket, then exits as SIGINT would
 * const pub = await TopicPublisher.create({ ... });
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
