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
 * @example
 * ```ts
 * import { Readable, Writable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { ReadableSource, RunSession, WritableSink, isInsideCompute } from '@hs/runtime';
 *
 * const graph = new Graph('scope');
 * const source = graph.add(new ReadableSource('in', Readable.from([new Uint8Array(8)]), { maxFrameBytes: 8 }));
 * // WritableSink calls write() from inside its compute()
 * const sink = graph.add(new WritableSink('out', new Writable({ objectMode: true, write(_chunk, _enc, done) { console.log(`inside compute: ${isInsideCompute()}`); done(); } })));
 * graph.addFlow(source.frames, sink.input);
 * const plan = compile(graph);
 * if (!plan.ok) throw plan.error;
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * await session.value.run();
 * session.value.dispose();
 * console.log(`inside compute: ${isInsideCompute()}`); // false here
 * ```
 */
export function isInsideCompute(): boolean {
  return computeScope.depth > 0;
}
