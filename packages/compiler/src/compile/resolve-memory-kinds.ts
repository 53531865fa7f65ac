import type { MemoryKind } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { ParameterMemoryKind } from '../params/parameter-memory-kind.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';

/** An output's resolved memory kind and where it came from. */
export interface ResolvedMemoryKind {
  readonly memoryKind: MemoryKind;
  /** `declared` (representation) or the parameter key `op.params.field`. */
  readonly source: string;
}

/**
 * Resolves every tensor output's memory kind: the declared one, or the generation-zero parameter
 * value through an exhaustive enum mapping (every admitted value exactly once, no extra cases) or a
 * direct `memoryKindParam` field (`MEMORY_KIND_MAPPING_INVALID` otherwise). Outputs whose parameters
 * are invalid are left out (already reported). Spec: "Derive memory kind from deployment parameters".
 */
export function resolveMemoryKinds(index: GraphIndex, validParams: ReadonlySet<Operator>, log: DiagnosticLog): Map<OutputPort, ResolvedMemoryKind> {
  const kinds = new Map<OutputPort, ResolvedMemoryKind>();
  for (const op of index.operators) {
    for (const port of index.specs.get(op)?.outputs ?? []) {
      const tensor = port.tensor;
      if (tensor === null) continue;
      if (tensor.representation.memoryKind !== null) {
        kinds.set(port, { memoryKind: tensor.representation.memoryKind, source: 'declared' });
      } else if (tensor.memoryKind !== null && validParams.has(op)) {
        const kind = mappedKind(port, tensor.memoryKind, log);
        if (kind !== null) kinds.set(port, { memoryKind: kind, source: tensor.memoryKind.ref.key });
      }
    }
  }
  return kinds;
}

function mappedKind(port: OutputPort, derivation: ParameterMemoryKind, log: DiagnosticLog): MemoryKind | null {
  const { ref, cases } = derivation;
  const domain = ref.declaration.domain;
  const invalid = (what: string): null => {
    log.error(DiagnosticCode.MemoryKindMappingInvalid, { kind: 'parameter', operator: port.operator.name, field: ref.field }, `output ${port.key}: ${what}`);
    return null;
  };
  if (cases === null) {
    if (domain.kind !== 'memoryKind') return invalid(`${ref.key} is a ${domain.kind} field; a direct memory-kind derivation needs a memoryKindParam([...]) field, or pass cases mapping an enum field`);
    return ref.value as MemoryKind;
  }
  if (domain.kind !== 'enum') return invalid(`${ref.key} is a ${domain.kind} field; a memory-kind mapping needs an enumParam([...]) field`);
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.value)) return invalid(`the mapping of ${ref.key} has two cases for '${c.value}'; give each enum value one case`);
    seen.add(c.value);
    if (!domain.values.includes(c.value)) return invalid(`the mapping of ${ref.key} has a case for '${c.value}', which the enum domain (${domain.values.join(', ')}) does not admit; remove it`);
  }
  const missing = domain.values.filter((v) => !seen.has(v));
  if (missing.length > 0) return invalid(`the mapping of ${ref.key} is not exhaustive: no case for ${missing.map((v) => `'${v}'`).join(', ')}; map every admitted value`);
  return cases.find((c) => c.value === ref.value)?.memoryKind ?? null;
}
