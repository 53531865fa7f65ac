import type { Result } from '@hs/streams';
import type { ExecutionContext } from '../execution-context.js';
import { assertAuthoringName } from './names.js';
import type { OperatorSpec } from './operator-spec.js';

/** What `compute()`, `start()` and `stop()` may return: nothing, a `Result`, or a promise of either. */
export type OperatorCallbackResult = Result<void> | void | Promise<Result<void> | void>;

/**
 * Base class of every operator. Subclasses declare ports in `setup()` (called once, by
 * `Graph.add()`) and do their work in `compute()`; `start()` and `stop()` are optional lifecycle
 * hooks the runtime calls around the run. An operator belongs to at most one graph.
 *
 * @example
 * ```ts
 * import { Graph, Operator, compile, type ExecutionContext, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { Device, MemoryKind, OK_VOID, unwrap, type Result } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Camera extends Operator {
 *   rgba!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 };
 *     this.rgba = spec.output('rgba').producesTensor({ representation, bounds: { maxByteSpan: 4 << 20 }, storage: 'runtimePool' });
 *   }
 *   compute(): void {}
 * }
 * class Grayscale extends Operator {
 *   rgba!: InputPort;
 *   gray!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.rgba = spec.input('rgba', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 });
 *     this.gray = spec.output('gray').producesTensor({
 *       representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
 *       bounds: { maxByteSpan: 1 << 20 },
 *       storage: 'runtimePool',
 *     });
 *   }
 *   compute(ctx: ExecutionContext): Result<void> {
 *     const rgba = ctx.receive(this.rgba);
 *     if (rgba === undefined) return OK_VOID;
 *     // allocate from this.gray's pool, launch the kernel on ctx.cudaStream(), emit the loan
 *     return OK_VOID;
 *   }
 * }
 *
 * const graph = new Graph('grayscale');
 * graph.addFlow(graph.add(new Camera('camera')).rgba, graph.add(new Grayscale('gray')).rgba);
 * const plan = unwrap(compile(graph, { deployment: { bindTensorOutputDevice: { 'gray.gray': Device.cuda(0) } } }));
 * const gray = plan.operator('gray');
 * console.log(`gray runs in ${gray?.partition} on ${gray?.device}, stream ${gray?.stream}`);
 * ```
 */
export abstract class Operator {
  /** Unique name within the graph (letters, digits, `_`, `-`). */
  readonly name: string;

  /** @throws HsError `InvalidArgument` when `name` is not a valid authoring name. */
  constructor(name: string) {
    assertAuthoringName('operator', name);
    this.name = name;
  }

  /** Declares ports and stream needs. Called once by `Graph.add()`. */
  abstract setup(spec: OperatorSpec): void;

  /** One activation. Failures are returned as `Result` errors. */
  abstract compute(ctx: ExecutionContext): OperatorCallbackResult;

  /** Optional hook before the first `compute()` (after pools are materialized). */
  start?(): OperatorCallbackResult;

  /** Optional hook after the last `compute()`. */
  stop?(): OperatorCallbackResult;
}
