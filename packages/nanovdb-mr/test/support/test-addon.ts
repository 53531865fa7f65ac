import { loadCudaNative } from '@hs/cuda-native';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** C-side counters of a table made by the test addon (native/test-addon/counting-resource.cc). */
export interface CountingStats {
  allocations: number;
  deallocations: number;
  asyncAllocations: number;
  asyncDeallocations: number;
  liveBlocks: number;
  bytesOutstanding: number;
  badReturns: number;
  destroyCalls: number;
}

/** The downstream test addon `hs_abi_test.node` (built next to `hs_cuda.node`). */
export interface CountingResourceAddon {
  createCountingResource(backing: 'host' | 'device', streamOrdered: boolean): unknown;
  createBadResourceTable(problem: string): unknown;
  countingResourceStats(table: unknown): CountingStats;
}

/** The test addon, or the reason it is unavailable (one line for the skip message). */
export function loadTestAddon(): { addon: CountingResourceAddon | null; reason: string } {
  const loaded = loadCudaNative();
  if (!loaded.ok) return { addon: null, reason: loaded.reason };
  const path = join(dirname(loaded.path), 'hs_abi_test.node');
  if (!existsSync(path)) return { addon: null, reason: `${path} is not built` };
  return { addon: createRequire(import.meta.url)(path) as CountingResourceAddon, reason: '' };
}
