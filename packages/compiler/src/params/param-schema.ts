import { ErrorCode, HsError } from '@hs/streams';
import { ParamField } from './param-field.js';

/** The fields of a schema, by name. */
export type ParamFields = Readonly<Record<string, ParamField>>;

/** The value object a schema's fields describe. */
export type ParamValues<F extends ParamFields> = { readonly [K in keyof F]: F[K] extends ParamField<infer V> ? V : never };

const SCHEMA_ID = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_-]*)+$/;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A typed parameter schema with a stable id (a dotted name such as `com.example.ResizeParams`) and a
 * version (positive integer). Operators bind it with generation-zero values in `setup()` through
 * `spec.params(schema, values)`. Spec: "Derive slot bytes from deployment parameters".
 * @example
 * ```ts
 * import { ParamSchema, Rate, paramSchema, rateParam, shapeParam } from '@hs/compiler';
 *
 * const ResizeParams = paramSchema('com.example.ResizeParams', 2, {
 *   outputShape: shapeParam({ rank: 3, maxExtent: 8192 }).recompileRequired(),
 *   frameRate: rateParam([Rate.hz(30), Rate.hz(60)]).runtime(),
 * });
 * console.log(ResizeParams instanceof ParamSchema, `${ResizeParams.id} v${ResizeParams.version}: ${Object.keys(ResizeParams.fields).join(', ')}`);
 * ```
 */
export class ParamSchema<F extends ParamFields = ParamFields> {
  /** @internal Use `paramSchema()`. */
  constructor(
    /** Stable dotted id. */
    readonly id: string,
    /** Positive schema version. */
    readonly version: number,
    /** Fields by name (frozen). */
    readonly fields: F,
  ) {
    Object.freeze(this);
  }
}

/**
 * Defines a parameter schema.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, paramSchema, rateParam, shapeParam, type OperatorSpec } from '@hs/compiler';
 * import { unwrap } from '@hs/streams';
 *
 * const ResizeParams = paramSchema('com.example.ResizeParams', 1, {
 *   outputShape: shapeParam({ rank: 3, maxExtent: 8192 }).recompileRequired(),
 *   frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime(),
 * });
 * class Resize extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     spec.params(ResizeParams, { outputShape: [720, 1280, 4], frameRate: Rate.hz(30) }); // generation-zero values
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('resize');
 * graph.add(new Resize('resize'));
 * const [params] = unwrap(compile(graph)).params;
 * console.log(`${params?.operator}: ${params?.schema} v${params?.version}, ${params?.fields.map((f) => `${f.name} (${f.mutability})`).join(', ')}`);
 * ```
 * @throws HsError `InvalidArgument` for a malformed id, a version that is not a positive integer, no
 * fields, a bad field name, or a value that is not a `ParamField`.
 */
export function paramSchema<const F extends ParamFields>(id: string, version: number, fields: F): ParamSchema<F> {
  if (typeof id !== 'string' || !SCHEMA_ID.test(id)) {
    throw new HsError(ErrorCode.InvalidArgument, `paramSchema id ${JSON.stringify(id)} must be a dotted name such as 'com.example.ResizeParams'`);
  }
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new HsError(ErrorCode.InvalidArgument, `paramSchema '${id}': version must be a positive integer, got ${String(version)}`);
  }
  const names = typeof fields === 'object' && fields !== null ? Object.keys(fields) : [];
  if (names.length === 0) throw new HsError(ErrorCode.InvalidArgument, `paramSchema '${id}': declare at least one field`);
  for (const name of names) {
    if (!FIELD_NAME.test(name) || !(fields[name] instanceof ParamField)) {
      throw new HsError(ErrorCode.InvalidArgument, `paramSchema '${id}': field '${name}' must have an identifier name and a ParamField value (integerParam, enumParam, ...)`);
    }
  }
  return new ParamSchema(id, version, Object.freeze({ ...fields }));
}
