import { ErrorCode, HsError, MEMORY_KINDS, type MemoryKind } from '@hs/streams';
import { Rate } from '../rates/rate.js';

/**
 * When a parameter value may change: `compileTime` (fixed for the plan), `recompileRequired` (a new
 * value needs a new plan and new resources), `runtime` (a running session may take a new value within
 * the field's admitted domain). Spec: "Derive slot bytes from deployment parameters".
 */
export type ParamMutability = 'compileTime' | 'recompileRequired' | 'runtime';

/** The admitted domain of a rate field: a list of rates, or an inclusive range. */
export type RateDomain =
  | readonly Rate[]
  | {
      /** Lowest admitted rate (inclusive). */
      readonly min: Rate;
      /** Highest admitted rate (inclusive). */
      readonly max: Rate;
    };

/** What a field holds and which values it admits. */
export type ParamFieldDomain =
  | {
      /** A safe integer in `[min, max]`. */
      readonly kind: 'integer';
      /** Lowest admitted value (inclusive). */
      readonly min: number;
      /** Highest admitted value (inclusive). */
      readonly max: number;
    }
  | {
      /** One string of `values`. */
      readonly kind: 'enum';
      /** Admitted strings. */
      readonly values: readonly string[];
    }
  | {
      /** A tensor shape of exactly `rank` extents, each in `[1, maxExtent]` elements. */
      readonly kind: 'shape';
      /** Required rank. */
      readonly rank: number;
      /** Largest admitted extent per dimension, elements. */
      readonly maxExtent: number;
    }
  | {
      /** One memory kind of `values`. */
      readonly kind: 'memoryKind';
      /** Admitted memory kinds. */
      readonly values: readonly MemoryKind[];
    }
  | {
      /** A rate within `admitted`. */
      readonly kind: 'rate';
      /** Admitted rates: a list or an inclusive range. */
      readonly admitted: RateDomain;
    };

/**
 * One typed field of a parameter schema: its domain, mutability and sensitivity. Immutable: the
 * modifiers return a new field. Build with `integerParam`, `enumParam`, `shapeParam`,
 * `memoryKindParam` or `rateParam`. Spec: "Derive slot bytes from deployment parameters",
 * "Derive memory kind from deployment parameters".
 * @example
 * ```ts
 * import { Rate, enumParam, rateParam } from '@hs/compiler';
 *
 * // Modifiers return a new field: a runtime rate a session may change within 1..120 Hz.
 * const frameRate = rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime();
 * const site = enumParam(['north', 'south']).markSensitive(); // redacted from plans and inspection
 * console.log(`${frameRate.domain.kind} field, ${frameRate.mutability}; 60 Hz: ${frameRate.valueProblem(Rate.hz(60)) ?? 'admitted'}`);
 * console.log(`240 Hz: ${frameRate.valueProblem(Rate.hz(240))}; site sensitive: ${site.sensitive}`);
 * ```
 */
export class ParamField<TValue = unknown> {
  /** @internal Phantom marker of the value type. */
  declare readonly valueType?: TValue;

  /**
   * @internal
   * @param domain What the field holds and which values it admits.
   * @param mutability When its value may change (`compileTime` by default).
   * @param sensitive True when its value is redacted from plans and inspection.
   */
  constructor(
    readonly domain: ParamFieldDomain,
    readonly mutability: ParamMutability = 'compileTime',
    readonly sensitive: boolean = false,
  ) {
    Object.freeze(this);
  }

  /** This field, changeable only by compiling a new plan and materializing new resources. */
  recompileRequired(): ParamField<TValue> {
    return new ParamField<TValue>(this.domain, 'recompileRequired', this.sensitive);
  }

  /** This field, changeable while a session runs (within its admitted domain). Never capacity-affecting. */
  runtime(): ParamField<TValue> {
    return new ParamField<TValue>(this.domain, 'runtime', this.sensitive);
  }

  /** This field, with its value redacted from plans and inspection. Never capacity-affecting. */
  markSensitive(): ParamField<TValue> {
    return new ParamField<TValue>(this.domain, this.mutability, true);
  }

  /**
   * Why `value` is outside this field's domain, or `null` when it is admitted.
   */
  valueProblem(value: unknown): string | null {
    const d = this.domain;
    switch (d.kind) {
      case 'integer':
        return typeof value === 'number' && Number.isSafeInteger(value) && value >= d.min && value <= d.max
          ? null
          : `must be an integer in [${d.min}, ${d.max}], got ${describe(value)}`;
      case 'enum':
        return typeof value === 'string' && d.values.includes(value) ? null : `must be one of ${d.values.map((v) => `'${v}'`).join(', ')}, got ${describe(value)}`;
      case 'memoryKind':
        return typeof value === 'string' && (d.values as readonly string[]).includes(value)
          ? null
          : `must be one of the admitted memory kinds ${d.values.join(', ')}, got ${describe(value)}`;
      case 'shape':
        if (!Array.isArray(value) || value.length !== d.rank) return `must be an array of ${d.rank} extents, got ${describe(value)}`;
        return value.every((e) => typeof e === 'number' && Number.isSafeInteger(e) && e >= 1 && e <= d.maxExtent)
          ? null
          : `extents must be integers in [1, ${d.maxExtent}], got [${value.map(describe).join(', ')}]`;
      case 'rate':
        if (!(value instanceof Rate)) return `must be a Rate, got ${describe(value)}`;
        return rateAdmitted(d.admitted, value) ? null : `${value.toString()} is outside the admitted domain ${describeRateDomain(d.admitted)}`;
    }
  }
}

/** True when `rate` lies in `domain`. */
export function rateAdmitted(domain: RateDomain, rate: Rate): boolean {
  if (Array.isArray(domain)) return (domain as readonly Rate[]).some((r) => r.equals(rate));
  const range = domain as { min: Rate; max: Rate };
  return rate.compare(range.min) >= 0 && rate.compare(range.max) <= 0;
}

/** The largest rate of `domain`. */
export function maxAdmittedRate(domain: RateDomain): Rate {
  if (!Array.isArray(domain)) return (domain as { max: Rate }).max;
  return (domain as readonly Rate[]).reduce((a, b) => (b.compare(a) > 0 ? b : a));
}

/** `[60 Hz, 120 Hz]` or `60 Hz..120 Hz`. */
export function describeRateDomain(domain: RateDomain): string {
  if (Array.isArray(domain)) return `[${(domain as readonly Rate[]).map((r) => r.toString()).join(', ')}]`;
  const range = domain as { min: Rate; max: Rate };
  return `${range.min.toString()}..${range.max.toString()}`;
}

function describe(value: unknown): string {
  if (value instanceof Rate) return value.toString();
  if (Array.isArray(value)) return `[${value.map(describe).join(', ')}]`;
  return typeof value === 'string' ? `'${value}'` : String(value);
}

function fail(message: string): never {
  throw new HsError(ErrorCode.InvalidArgument, message);
}

/**
 * An integer field admitting `[min, max]`.
 * @throws HsError `InvalidArgument` unless `min <= max` are safe integers.
 * @example
 * ```ts
 * import { CompileError, Graph, Operator, compile, integerParam, paramSchema, type OperatorSpec } from '@hs/compiler';
 *
 * const BatchParams = paramSchema('com.example.BatchParams', 1, {
 *   batchSize: integerParam({ min: 1, max: 64 }).recompileRequired(),
 * });
 * class Batcher extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     spec.params(BatchParams, { batchSize: 128 }); // outside [1, 64]: compile() reports it
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('batching');
 * graph.add(new Batcher('batcher'));
 * const result = compile(graph);
 * if (!result.ok && result.error instanceof CompileError) {
 *   for (const d of result.error.diagnostics) console.log(`${d.code}: ${d.message}`);
 * }
 * ```
 */
export function integerParam(range: { readonly min: number; readonly max: number }): ParamField<number> {
  if (!Number.isSafeInteger(range?.min) || !Number.isSafeInteger(range?.max) || range.min > range.max) {
    fail(`integerParam({ min, max }) needs safe integers with min <= max, got ${JSON.stringify(range)}`);
  }
  return new ParamField<number>(Object.freeze({ kind: 'integer', min: range.min, max: range.max }));
}

/**
 * An enum field admitting exactly `values` (non-empty, distinct names).
 * @throws HsError `InvalidArgument` for an empty or repeating list.
 * @example
 * ```ts
 * import { Graph, Operator, compile, enumParam, memoryKindCase, parameterMemoryKind, paramSchema, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CaptureParams = paramSchema('com.example.CaptureParams', 1, {
 *   storage: enumParam(['pageable', 'pinned']).recompileRequired(),
 * });
 * class Capture extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(CaptureParams, { storage: 'pinned' });
 *     // Every admitted enum value maps to one memory kind.
 *     const memoryKind = parameterMemoryKind(params.ref('storage'), [memoryKindCase('pageable', MemoryKind.Host), memoryKindCase('pinned', MemoryKind.PinnedHost)]);
 *     spec.output('frames').producesTensor({ representation: { dtype: DType.uint8, rank: 3 }, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }, { memoryKind });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('capture');
 * graph.add(new Capture('camera'));
 * const pool = unwrap(compile(graph)).pool('pool:camera.frames');
 * console.log(`frames in ${pool?.memoryKind}, chosen by ${pool?.memoryKindSource}`);
 * ```
 */
export function enumParam<const T extends string>(values: readonly T[]): ParamField<T> {
  if (!Array.isArray(values) || values.length === 0 || new Set(values).size !== values.length || values.some((v) => typeof v !== 'string')) {
    fail(`enumParam(values) needs a non-empty list of distinct strings, got ${JSON.stringify(values)}`);
  }
  return new ParamField<T>(Object.freeze({ kind: 'enum', values: Object.freeze([...values]) }));
}

/**
 * A bounded integral shape: exactly `rank` extents (elements per dimension), each in `[1, maxExtent]`.
 * @throws HsError `InvalidArgument` for a rank outside [1, 8] or a bad `maxExtent`.
 * @example
 * ```ts
 * import { Graph, Operator, compile, parameterContiguousByteSpan, paramSchema, shapeParam, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CaptureParams = paramSchema('com.example.CaptureParams', 1, {
 *   frameShape: shapeParam({ rank: 3, maxExtent: 8192 }).recompileRequired(), // height, width, channels
 * });
 * class Capture extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(CaptureParams, { frameShape: [1080, 1920, 4] });
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 *     spec.output('frames').producesTensor({ representation, storage: 'runtimePool' }, parameterContiguousByteSpan(params.ref('frameShape')));
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('capture');
 * graph.add(new Capture('camera'));
 * console.log(`a 1080p RGBA slot: ${unwrap(compile(graph)).pool('pool:camera.frames')?.maxByteSpan} bytes`);
 * console.log(`[0, 1920, 4]: ${CaptureParams.fields.frameShape.valueProblem([0, 1920, 4])}`);
 * ```
 */
export function shapeParam(bounds: { readonly rank: number; readonly maxExtent: number }): ParamField<readonly number[]> {
  if (!Number.isSafeInteger(bounds?.rank) || bounds.rank < 1 || bounds.rank > 8 || !Number.isSafeInteger(bounds.maxExtent) || bounds.maxExtent < 1) {
    fail(`shapeParam({ rank, maxExtent }) needs rank in [1, 8] and maxExtent >= 1, got ${JSON.stringify(bounds)}`);
  }
  return new ParamField<readonly number[]>(Object.freeze({ kind: 'shape', rank: bounds.rank, maxExtent: bounds.maxExtent }));
}

/**
 * A direct memory-kind field admitting exactly `values`: non-empty, distinct, concrete kinds (an
 * unknown kind is never admissible).
 * @throws HsError `InvalidArgument` for an empty, repeating or unknown list.
 * @example
 * ```ts
 * import { Graph, Operator, compile, memoryKindParam, parameterMemoryKind, paramSchema, type OperatorSpec } from '@hs/compiler';
 * import { Device, MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const OutputParams = paramSchema('com.example.OutputParams', 1, {
 *   memory: memoryKindParam([MemoryKind.PinnedHost, MemoryKind.CudaDevice]).recompileRequired(),
 * });
 * class Renderer extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(OutputParams, { memory: MemoryKind.CudaDevice });
 *     const representation = { dtype: DType.uint8, rank: 3 };
 *     spec.output('image').producesTensor({ representation, bounds: { maxByteSpan: 4 << 20 }, storage: 'runtimePool' }, { memoryKind: parameterMemoryKind(params.ref('memory')) });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('render');
 * graph.add(new Renderer('renderer'));
 * const plan = unwrap(compile(graph, { deployment: { bindTensorOutputDevice: { 'renderer.image': Device.cuda(0) } } }));
 * console.log(`image pool in ${plan.pool('pool:renderer.image')?.memoryKind} on ${plan.pool('pool:renderer.image')?.device}`);
 * ```
 */
export function memoryKindParam(values: readonly MemoryKind[]): ParamField<MemoryKind> {
  if (!Array.isArray(values) || values.length === 0 || new Set(values).size !== values.length || !values.every((v) => MEMORY_KINDS.includes(v))) {
    fail(`memoryKindParam(values) needs a non-empty list of distinct MemoryKind values (no unknown kind), got ${JSON.stringify(values)}`);
  }
  return new ParamField<MemoryKind>(Object.freeze({ kind: 'memoryKind', values: Object.freeze([...values]) }));
}

/**
 * A rate field (Hz) admitting `admitted`: a non-empty list of rates or an inclusive `{ min, max }` range.
 * @throws HsError `InvalidArgument` for an empty list, a non-Rate, or `min > max`.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, paramSchema, rateParam, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CameraParams = paramSchema('com.example.CameraParams', 1, { frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime() });
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(CameraParams, { frameRate: Rate.hz(60) });
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 *     this.frames = spec.output('frames').producesTensor({ representation, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }).nominalRate(params.ref('frameRate'));
 *   }
 *   compute(): void {}
 * }
 * class Recorder extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames');
 *     spec.temporalContract({ trigger: { clock: Rate.hz(15) } });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('capture');
 * graph.addFlow(graph.add(new Camera('camera')).frames, graph.add(new Recorder('recorder')).frames);
 * const edge = unwrap(compile(graph)).edges[0];
 * console.log(`${edge?.id}: ${edge?.queueDepth} entries at 60 Hz, ${edge?.admittedQueueDepth} admitted for up to 120 Hz`);
 * ```
 */
export function rateParam(admitted: RateDomain): ParamField<Rate> {
  if (Array.isArray(admitted)) {
    if (admitted.length === 0 || !admitted.every((r) => r instanceof Rate)) fail('rateParam([...]) needs a non-empty list of Rate values');
    return new ParamField<Rate>(Object.freeze({ kind: 'rate', admitted: Object.freeze([...(admitted as readonly Rate[])]) }));
  }
  const range = admitted as { min: unknown; max: unknown };
  if (!(range.min instanceof Rate) || !(range.max instanceof Rate) || range.min.compare(range.max) > 0) {
    fail('rateParam({ min, max }) needs two Rate values with min <= max');
  }
  return new ParamField<Rate>(Object.freeze({ kind: 'rate', admitted: Object.freeze({ min: range.min, max: range.max }) }));
}
