import type { MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import type { TensorInputRequirements } from './tensor-input-requirements.js';

/** A producer's layout as far as it is known; `memoryKind` is `null` while a parameter still selects it. */
export interface ProducedLayout {
  readonly memoryKind: MemoryKind | null;
  readonly dtype: DType;
  readonly rank: number;
}

/**
 * Lists how `produced` breaks the consumer's declared `required` layout (memory kind, dtype, rank), one
 * phrase each; empty when it fits or a field is not declared on either side. `kindSource` explains a
 * parameter-selected memory kind in the phrase. Spec: "Current limitations" (exact receive-side checks).
 */
export function layoutConflicts(produced: ProducedLayout, required: TensorInputRequirements, kindSource = ''): string[] {
  const conflicts: string[] = [];
  if (produced.memoryKind !== null && required.memoryKind !== undefined && required.memoryKind !== produced.memoryKind) {
    conflicts.push(`memory kind ${produced.memoryKind}${kindSource} vs required ${required.memoryKind}`);
  }
  if (required.dtype !== undefined && required.dtype !== produced.dtype) {
    conflicts.push(`dtype ${produced.dtype.name} vs required ${required.dtype.name}`);
  }
  if (required.rank !== undefined && required.rank !== produced.rank) {
    conflicts.push(`rank ${produced.rank} vs required ${required.rank}`);
  }
  return conflicts;
}
