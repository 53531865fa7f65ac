import { ErrorCode, HsError } from '@hs/streams';
import { InputPort } from '../authoring/ports.js';
import { TensorByteSpanExpression } from './byte-span-expression.js';

// This leaf lives apart from the other byte-span leaves because it checks its argument against
// `InputPort`: ports import the output declarations, which import `TensorByteSpanExpression`, so the
// expression module itself must not import ports as a value.

/**
 * The proven finite byte bound of the one producer connected to `input` (a runtime pool or bounded
 * tensor declaration), or, for an input subscribed to an external topic, the topic's bound
 * (`graph.subscribe(topic, input, { maxByteSpan })`; the import refuses larger tensors at run time).
 * Disconnected, fan-in and unbounded inputs, and a subscription without `maxByteSpan`, are rejected by
 * `compile()` (`TENSOR_BYTE_SPAN_INPUT_UNBOUNDED`).
 * Spec: "Derive slot bytes from deployment parameters" (a connected producer's bound or an imported
 * external-topic bound).
 * @throws HsError `InvalidArgument` when `input` is not an `InputPort`.
 * @example
 * ```ts
 * import { Graph, Operator, compile, inputMaxByteSpan, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const RGBA = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.output('frames').producesTensor({ representation: RGBA, bounds: { maxByteSpan: 1920 * 1080 * 4 }, storage: 'runtimePool' });
 *   }
 *   compute(): void {}
 * }
 * class Denoise extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames', RGBA);
 *     // Output slots as large as the producer's bound, whatever resolution the camera is set to.
 *     spec.output('clean').producesTensor({ representation: RGBA, storage: 'runtimePool' }, inputMaxByteSpan(this.frames));
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('denoise');
 * graph.addFlow(graph.add(new Camera('camera')).frames, graph.add(new Denoise('denoise')).frames);
 * console.log(`clean slots: ${unwrap(compile(graph)).pool('pool:denoise.clean')?.maxByteSpan} B`);
 * ```
 */
export function inputMaxByteSpan(input: InputPort): TensorByteSpanExpression {
  if (!(input instanceof InputPort)) throw new HsError(ErrorCode.InvalidArgument, 'inputMaxByteSpan(input) takes an InputPort of the same operator');
  return new TensorByteSpanExpression({ kind: 'inputMax', input });
}
