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
 */
export function inputMaxByteSpan(input: InputPort): TensorByteSpanExpression {
  if (!(input instanceof InputPort)) throw new HsError(ErrorCode.InvalidArgument, 'inputMaxByteSpan(input) takes an InputPort of the same operator');
  return new TensorByteSpanExpression({ kind: 'inputMax', input });
}
