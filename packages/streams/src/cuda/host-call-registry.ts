import type { CudaNativeBinding } from '@hs/cuda-native';

/**
 * Routes host calls from the addon's thread-safe function to JS closures by id. One registry per
 * thread (the addon keeps one dispatcher per environment); every CUDA backend of the thread shares it.
 */
export class HostCallRegistry {
  private static instance: HostCallRegistry | null = null;
  private readonly calls = new Map<number, () => void>();
  private nextId = 1;

  private constructor(private readonly binding: CudaNativeBinding) {
    binding.setHostCallDispatcher((id) => {
      const fn = this.calls.get(id);
      if (fn === undefined) return;
      this.calls.delete(id);
      fn();
    });
  }

  /** The thread's registry, created (and the dispatcher set) on first use. */
  static of(binding: CudaNativeBinding): HostCallRegistry {
    HostCallRegistry.instance ??= new HostCallRegistry(binding);
    return HostCallRegistry.instance;
  }

  /**
   * Enqueues `fn` on `stream`: it runs on the JS thread after the work enqueued before it; with
   * `blocking` later work on the stream waits until it returned. `fn` must not throw. Returns the CUDA
   * status of the enqueue.
   */
  launch(stream: bigint, fn: () => void, blocking: boolean): number {
    const id = this.nextId++;
    this.calls.set(id, fn);
    const status = this.binding.launchHostFunc(stream, id, blocking);
    if (status !== 0) this.calls.delete(id);
    return status;
  }

  /**
   * Enqueues `fn` to run on the JS thread once everything enqueued on `stream` (of `device`) so far completed,
   * after the host calls enqueued on it before. Without a host function on the stream (the addon's completion
   * waiter) when the addon has one and `viaEvent`; else a non-blocking host call. `fn` must not throw.
   * Returns the CUDA status of the enqueue.
   */
  notify(stream: bigint, device: number, fn: () => void, viaEvent: boolean): number {
    if (!viaEvent || this.binding.notifyWhenDone === undefined) return this.launch(stream, fn, false);
    const id = this.nextId++;
    this.calls.set(id, fn);
    const status = this.binding.notifyWhenDone(stream, device, id);
    if (status !== 0) this.calls.delete(id);
    return status;
  }
}
