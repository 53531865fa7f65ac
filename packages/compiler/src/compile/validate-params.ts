import type { Operator } from '../authoring/operator.js';
import type { TensorByteSpanExpression } from '../byte-span/byte-span-expression.js';
import type { ParamRef } from '../params/bound-params.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';

/** Every parameter reference of a byte-span expression, in tree order. */
export function byteSpanRefs(expression: TensorByteSpanExpression): ParamRef[] {
  const node = expression.node;
  switch (node.kind) {
    case 'parameterContiguous':
      return [node.ref];
    case 'projected':
      return [...node.refs];
    case 'operation':
      return [...byteSpanRefs(node.left), ...byteSpanRefs(node.right)];
    default:
      return [];
  }
}

/**
 * Checks bound parameters: every field has a generation-zero value inside its domain and no unknown
 * value is given (`PARAMETER_VALUE_INVALID`); every reference used by a derivation belongs to the
 * declaring operator (`PARAMETER_REF_INVALID`); every capacity-affecting field (byte span, memory kind)
 * is compile-time or recompile-required and not sensitive (`PARAMETER_NOT_CAPACITY_ELIGIBLE`).
 * Returns the operators whose values are all valid.
 * Spec: "Derive slot bytes from deployment parameters" (warning on capacity-affecting parameters).
 */
export function validateParams(index: GraphIndex, log: DiagnosticLog): ReadonlySet<Operator> {
  const valid = new Set<Operator>();
  for (const op of index.operators) {
    const spec = index.specs.get(op);
    const bound = spec?.boundParams ?? null;
    let allValid = true;
    if (bound !== null) {
      const { schema, values } = bound;
      for (const [field, declaration] of Object.entries(schema.fields)) {
        const problem = Object.hasOwn(values, field) ? declaration.valueProblem(values[field]) : 'has no generation-zero value';
        if (problem !== null) {
          allValid = false;
          log.error(
            DiagnosticCode.ParameterValueInvalid,
            { kind: 'parameter', operator: op.name, field },
            `operator '${op.name}' parameter '${field}' (${schema.id} v${schema.version}) ${declaration.sensitive ? 'has a value outside its domain (sensitive: value not shown)' : problem}; pass an admitted value to spec.params()`,
          );
        }
      }
      for (const field of Object.keys(values)) {
        if (!Object.hasOwn(schema.fields, field)) {
          allValid = false;
          log.error(
            DiagnosticCode.ParameterValueInvalid,
            { kind: 'parameter', operator: op.name, field },
            `operator '${op.name}' gives a value for '${field}', which schema ${schema.id} v${schema.version} does not declare; remove it or add the field`,
          );
        }
      }
    }
    if (allValid) valid.add(op);
    for (const port of spec?.outputs ?? []) {
      const tensor = port.tensor;
      if (tensor === null) continue;
      const refs = [...(tensor.byteSpan === null ? [] : byteSpanRefs(tensor.byteSpan)), ...(tensor.memoryKind === null ? [] : [tensor.memoryKind.ref])];
      for (const ref of refs) {
        const subject = { kind: 'parameter', operator: op.name, field: ref.field } as const;
        if (ref.params.operator !== op) {
          allValid = false;
          valid.delete(op);
          log.error(
            DiagnosticCode.ParameterRefInvalid,
            subject,
            `output ${port.key} derives from ${ref.key}, a parameter of another operator; a derivation may read only its own operator's parameters`,
          );
          continue;
        }
        const d = ref.declaration;
        if (d.mutability === 'runtime' || d.sensitive) {
          log.error(
            DiagnosticCode.ParameterNotCapacityEligible,
            subject,
            `output ${port.key} derives its ${tensor.memoryKind?.ref === ref ? 'memory kind' : 'byte span'} from ${ref.key}, which is ${d.sensitive ? 'sensitive' : 'runtime-mutable'}; ` +
              'a capacity-affecting parameter must be compile-time or .recompileRequired() and not sensitive',
          );
        }
      }
    }
  }
  return valid;
}
