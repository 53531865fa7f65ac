import { describe, expect, it } from 'vitest';
import { fuzzByteSpanParams } from '../src/fuzz/byte-span-params.js';
import { fuzzDLPackImport } from '../src/fuzz/dlpack-import.js';
import { fuzzGraphAuthoring } from '../src/fuzz/graph-authoring.js';
import { fuzzIpcDescriptors } from '../src/fuzz/ipc-descriptor.js';
import { fuzzNanoVdbCorruption } from '../src/fuzz/nanovdb-corruption.js';
import { fuzzRuns } from '../src/fuzz-settings.js';

// Fixed seed (FUZZ_SEED, or HS_FUZZ_SEED) and CI-sized run counts; HS_FUZZ_RUNS=<n> runs longer on demand.
describe('fuzzing (fast-check)', () => {
  it('DLPack import: every random managed tensor imports in bounds or fails with a typed error', () => {
    const outcome = fuzzDLPackImport(fuzzRuns(2000));
    expect(outcome.failure).toBeNull();
  });

  it('byte-span expressions and Params: slot bytes match an independent evaluation or the predicted diagnostic', () => {
    const outcome = fuzzByteSpanParams(fuzzRuns(1000));
    expect(outcome.failure).toBeNull();
  });

  it('graph authoring: random graphs compile to a consistent plan or fail with listed diagnostics, never a stray throw', () => {
    const outcome = fuzzGraphAuthoring(fuzzRuns(600));
    expect(outcome.failure).toBeNull();
  });

  it('NanoVDB validation: corrupted grids are refused with typed errors or are safe to traverse', () => {
    const outcome = fuzzNanoVdbCorruption(fuzzRuns(200));
    expect(outcome.failure).toBeNull();
  });

  it('IPC descriptors: frame sequences decode inside the topic geometry with monotonic generations or are refused with ProtocolError', () => {
    const outcome = fuzzIpcDescriptors(fuzzRuns(500));
    expect(outcome.failure).toBeNull();
    expect(outcome.detail).toMatch(/[1-9]\d* frames accepted/);
  });
});
