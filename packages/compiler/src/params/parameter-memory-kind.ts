import { ErrorCode, HsError, MEMORY_KINDS, type MemoryKind } from '@hs/streams';
import { ParamRef } from './bound-params.js';

/** One case of an enum-to-memory-kind mapping: source enum value → concrete memory kind. */
export interface MemoryKindCase {
  /** The enum field's value. */
  readonly value: string;
  /** The memory kind that value selects. */
  readonly memoryKind: MemoryKind;
}

/**
 * A memory kind chosen by a generation-zero parameter: an exhaustive mapping from an enum field's
 * values, or (without cases) a direct `memoryKindParam` field. Resolved once by `compile()` and frozen
 * into the allocation record. Spec: "Derive memory kind from deployment parameters".
 */
export interface ParameterMemoryKind {
  /** The enum or memory-kind field that selects the kind. */
  readonly ref: ParamRef;
  /** The mapping; `null` for a direct memory-kind field. */
  readonly cases: readonly MemoryKindCase[] | null;
}

/**
 * One mapping case.
 * @throws HsError `InvalidArgument` for a non-string value or an unknown memory kind.
 * @example
 * ```ts
 * import { Graph, Operator, compile, enumParam, memoryKindCase, parameterMemoryKind, paramSchema, type OperatorSpec } from '@hs/compiler';
 * import { Device, MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const GridParams = paramSchema('com.example.GridParams', 1, { placement: enumParam(['host', 'gpu']).recompileRequired() });
 * class Voxelizer extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(GridParams, { placement: 'gpu' });
 *     const cases = [memoryKindCase('host', MemoryKind.PinnedHost), memoryKindCase('gpu', MemoryKind.CudaDevice)];
 *     spec.output('grid').producesTensor({ representation: { dtype: DType.float32, rank: 3 }, bounds: { maxByteSpan: 16 << 20 }, storage: 'runtimePool' }, { memoryKind: parameterMemoryKind(params.ref('placement'), cases) });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('voxels');
 * graph.add(new Voxelizer('voxelizer'));
 * const pool = unwrap(compile(graph, { deployment: { bindTensorOutputDevice: { 'voxelizer.grid': Device.cuda(0) } } })).pool('pool:voxelizer.grid');
 * console.log(`placement 'gpu' -> ${pool?.memoryKind} on ${pool?.device}`);
 * ```
 */
export function memoryKindCase(value: string, memoryKind: MemoryKind): MemoryKindCase {
  if (typeof value !== 'string' || !MEMORY_KINDS.includes(memoryKind)) {
    throw new HsError(ErrorCode.InvalidArgument, `memoryKindCase(value, memoryKind) takes an enum value name and a concrete MemoryKind, got ${JSON.stringify([value, memoryKind])}`);
  }
  return Object.freeze({ value, memoryKind });
}

/**
 * Selects an output's memory kind from parameter `ref`: with `cases`, the enum field's value is mapped
 * (the cases must cover every admitted value once, no extras: `MEMORY_KIND_MAPPING_INVALID`); without,
 * `ref` must name a `memoryKindParam` field.
 * @throws HsError `InvalidArgument` when `ref` is not a `ParamRef` or `cases` is not an array of cases.
 * @example
 * ```ts
 * import { CompileError, Graph, Operator, compile, enumParam, memoryKindCase, parameterMemoryKind, paramSchema, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CaptureParams = paramSchema('com.example.CaptureParams', 1, { storage: enumParam(['pageable', 'pinned', 'device']).recompileRequired() });
 * class Capture extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(CaptureParams, { storage: 'pinned' });
 *     // The cases must cover every admitted value: 'device' is missing here.
 *     const memoryKind = parameterMemoryKind(params.ref('storage'), [memoryKindCase('pageable', MemoryKind.Host), memoryKindCase('pinned', MemoryKind.PinnedHost)]);
 *     spec.output('frames').producesTensor({ representation: { dtype: DType.uint8, rank: 3 }, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }, { memoryKind });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('capture');
 * graph.add(new Capture('camera'));
 * const result = compile(graph);
 * if (!result.ok && result.error instanceof CompileError) console.log(result.error.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n'));
 * ```
 */
export function parameterMemoryKind(ref: ParamRef, cases?: readonly MemoryKindCase[]): ParameterMemoryKind {
  if (!(ref instanceof ParamRef)) throw new HsError(ErrorCode.InvalidArgument, 'parameterMemoryKind(ref, cases?) takes params.ref(field)');
  if (cases !== undefined && !Array.isArray(cases)) throw new HsError(ErrorCode.InvalidArgument, 'parameterMemoryKind: cases must be an array of memoryKindCase(...)');
  return Object.freeze({ ref, cases: cases === undefined ? null : Object.freeze([...cases]) });
}
