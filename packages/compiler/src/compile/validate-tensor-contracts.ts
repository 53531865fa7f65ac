import { layoutConflicts } from '../authoring/layout-conflicts.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { OutputPort } from '../authoring/ports.js';
import type { GraphIndex } from './graph-index.js';
import type { ResolvedMemoryKind } from './resolve-memory-kinds.js';

/**
 * Checks tensor declarations: bounds that reject every allocation (`TENSOR_BOUNDS_ZERO`, a warning: the
 * plan keeps the pool, whose `allocateTensor()` then refuses every request), a `maxRank`
 * below the representation's rank (`TENSOR_MAX_RANK_TOO_SMALL`), a `maxByteSpan` beyond 2^53 - 1
 * (`ARITHMETIC_OVERFLOW`), and, on every edge, the producer's representation against the consumer's
 * requirements (`PHYSICAL_TENSOR_LAYOUT_MISMATCH`). An edge whose producer declared no tensor is left
 * to the runtime's receive-side check.
 * Spec: "Sized cold, borrowed hot", "Current limitations".
 */
export function validateTensorContracts(index: GraphIndex, kinds: ReadonlyMap<OutputPort, ResolvedMemoryKind>, log: DiagnosticLog): void {
  for (const op of index.operators) {
    for (const port of index.specs.get(op)?.outputs ?? []) {
      const bounds = port.tensor?.bounds;
      if (port.tensor === null || bounds === null || bounds === undefined) continue;
      const subject = { kind: 'port', operator: op.name, port: port.name } as const;
      if (bounds.maxByteSpan === 0 || bounds.maxRank === 0) {
        const zero = bounds.maxByteSpan === 0 ? 'maxByteSpan' : 'maxRank';
        // Spec ("Sized cold, borrowed hot"): a zero literal bound is a valid plan whose pool refuses every
        // allocation; it is not "unbounded". Warn, so an author who meant "no limit" sees it.
        log.warning(
          DiagnosticCode.TensorBoundsZero,
          subject,
          `output ${port.key}: bounds.${zero} is 0, so its pool rejects every allocation (allocateTensor() returns InvalidArgument; zero is not "unbounded"); ` +
            `if the output should publish tensors, declare the largest ${zero === 'maxByteSpan' ? 'byte span of one tensor, in bytes' : 'rank a tensor may have'}`,
        );
      }
      if (bounds.maxRank !== 0 && bounds.maxRank < port.tensor.representation.rank) {
        log.error(
          DiagnosticCode.TensorMaxRankTooSmall,
          subject,
          `output ${port.key}: bounds.maxRank ${bounds.maxRank} is below representation.rank ${port.tensor.representation.rank}; ` +
            'raise maxRank or omit it (it defaults to the rank)',
        );
      }
      if (bounds.maxByteSpan !== null && !Number.isSafeInteger(bounds.maxByteSpan)) {
        log.error(
          DiagnosticCode.ArithmeticOverflow,
          subject,
          `output ${port.key}: bounds.maxByteSpan ${bounds.maxByteSpan} exceeds 2^53 - 1 bytes and cannot be sized exactly; declare a smaller bound`,
        );
      }
    }
  }
  for (const edge of index.edges) {
    const declared = edge.flow.output.tensor?.representation;
    const kind = kinds.get(edge.flow.output);
    if (declared === undefined || kind === undefined) continue;
    const mismatches = layoutConflicts(
      { ...declared, memoryKind: kind.memoryKind },
      edge.flow.input.requirements,
      kind.source === 'declared' ? '' : ` (selected by ${kind.source})`,
    );
    if (mismatches.length > 0) {
      log.error(
        DiagnosticCode.PhysicalTensorLayoutMismatch,
        { kind: 'edge', edge: edge.id },
        `edge ${edge.id}: the producer publishes a layout the consumer does not accept (${mismatches.join('; ')}); ` +
          'change the producer representation or the consumer requirements so they agree (the runtime inserts no conversions)',
      );
    }
  }
}
