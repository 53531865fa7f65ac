import { ErrorCode, HsError } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { ParamField } from './param-field.js';
import type { ParamFields, ParamSchema, ParamValues } from './param-schema.js';

/**
 * A reference to one field of an operator's bound parameters, used as an expression dependency
 * (`parameterContiguousByteSpan(params.ref('outputShape'))`, `parameterMemoryKind(...)`,
 * `nominalRate(params.ref('frameRate'))`). Spec: "Derive slot bytes from deployment parameters".
 * @example
 * ```ts
 * import { Graph, Operator, Rate, paramSchema, rateParam, type OperatorSpec, type ParamRef } from '@hs/compiler';
 * import { MemoryKind } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CameraParams = paramSchema('com.example.CameraParams', 1, { frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime() });
 * let frameRate: ParamRef<Rate> | undefined;
 * class Camera extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     frameRate = spec.params(CameraParams, { frameRate: Rate.hz(60) }).ref('frameRate');
 *     // A ref is an expression dependency: the output's rate follows the parameter.
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 *     spec.output('frames').producesTensor({ representation }).nominalRate(frameRate);
 *   }
 *   compute(): void {}
 * }
 *
 * new Graph('capture').add(new Camera('camera'));
 * console.log(`${frameRate?.key} = ${frameRate?.value} (generation zero), ${frameRate?.declaration.mutability}`);
 * ```
 */
export class ParamRef<TValue = unknown> {
  /** @internal Created by `BoundParams.ref()`. */
  constructor(
    /** The binding the field belongs to. */
    readonly params: BoundParams,
    /** Field name. */
    readonly field: string,
  ) {
    Object.freeze(this);
  }

  /** The field declaration. */
  get declaration(): ParamField<TValue> {
    return this.params.schema.fields[this.field] as ParamField<TValue>;
  }

  /** Generation-zero value. */
  get value(): TValue {
    return this.params.values[this.field] as TValue;
  }

  /** `operator.params.field`, the key used in diagnostics and plan records. */
  get key(): string {
    return `${this.params.operator.name}.params.${this.field}`;
  }
}

/**
 * A schema bound to one operator with its generation-zero values (frozen), returned by
 * `spec.params(schema, values)`. Values are checked against their domains by `compile()`
 * (`PARAMETER_VALUE_INVALID`).
 * @example
 * ```ts
 * import { Graph, Operator, integerParam, paramSchema, type OperatorSpec } from '@hs/compiler';
 *
 * const TileParams = paramSchema('com.example.TileParams', 1, { tileSize: integerParam({ min: 8, max: 512 }) });
 * class Tiler extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(TileParams, { tileSize: 64 }); // a BoundParams
 *     console.log(`${params.operator.name} binds ${params.schema.id}: tileSize = ${String(params.values['tileSize'])}; ref ${params.ref('tileSize').key}`);
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('tiling');
 * const tiler = graph.add(new Tiler('tiler'));
 * console.log(`compile() reads it from the spec: v${graph.specOf(tiler).boundParams?.schema.version}`);
 * ```
 */
export class BoundParams<F extends ParamFields = ParamFields> {
  /**
   * @internal Created by `OperatorSpec.params()`.
   * @param operator The operator the parameters are bound to.
   * @param schema The schema the values follow.
   * @param values Generation-zero values (frozen copy).
   */
  constructor(
    readonly operator: Operator,
    readonly schema: ParamSchema<F>,
    /** Generation-zero values (frozen copy). */
    readonly values: Readonly<Record<string, unknown>>,
  ) {
    Object.freeze(this);
  }

  /**
   * A reference to field `field`.
   * @throws HsError `NotFound` when the schema has no such field.
   */
  ref<K extends keyof F & string>(field: K): ParamRef<ParamValues<F>[K]> {
    if (!Object.hasOwn(this.schema.fields, field)) {
      throw new HsError(ErrorCode.NotFound, `params '${this.schema.id}' of operator '${this.operator.name}' have no field '${field}'`);
    }
    return new ParamRef<ParamValues<F>[K]>(this, field);
  }
}
