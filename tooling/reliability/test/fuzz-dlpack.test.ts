import { expect, it } from 'vitest';
import { fuzzDLPackImport } from '../src/fuzz/dlpack-import.js';
import { fuzzRuns } from '../src/fuzz-settings.js';

it('DLPack import: every random managed tensor imports in bounds or fails with a typed error', () => {
  const outcome = fuzzDLPackImport(fuzzRuns(2000));
  expect(outcome.failure).toBeNull();
});
