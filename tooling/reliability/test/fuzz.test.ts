import { describe, expect, it } from 'vitest';
import { fuzzByteSpanParams } from '../src/fuzz/byte-span-params.js';
import { fuzzDLPackImport } from '../src/fuzz/dlpack-import.js';
import { fuzzGraphAuthoring } from '../src/fuzz/graph-authoring.js';
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
});
