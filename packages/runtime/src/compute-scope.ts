/**
 * Marks the synchronous part of an operator's `compute()`: the operator runner raises `depth` before it
 * calls compute() and lowers it when compute() returns (or throws, or hands back its promise).
 */
export const computeScope = { depth: 0 };

/**
 * True while an operator's `compute()` is running synchronously in this thread. Standalone IPC clients
 * (`ChannelRuntime` of `@hs/ipc`) use it to refuse being driven from inside a graph, where ports and
 * `addFlow()` are the one vocabulary. Work after the first `await` inside an async compute() is not seen.
 * Spec: warning "One graph, one vocabulary" (holoscan-5.0-tensors-in-depth).
 */
export function isInsideCompute(): boolean {
  return computeScope.depth > 0;
}
