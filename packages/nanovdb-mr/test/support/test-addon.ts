import { loadCudaTestAddon } from '@hs/cuda-native';

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

/** The downstream test addon `hs_abi_test.node` (built into @hs/cuda-native's build/, never published). */
export interface CountingResourceAddon {
  createCountingResource(backing: 'host' | 'device', streamOrdered: boolean): unknown;
  createBadResourceTable(problem: string): unknown;
  countingResourceStats(table: unknown): CountingStats;
}

/** The test addon, or the reason it is unavailable (one line for the skip message). */
export function loadTestAddon(): { addon: CountingResourceAddon | null; reason: string } {
  const loaded = loadCudaTestAddon<CountingResourceAddon>('hs_abi_test.node');
  return loaded.ok ? { addon: loaded.addon, reason: '' } : { addon: null, reason: loaded.reason };
}
