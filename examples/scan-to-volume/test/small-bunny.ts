import { bunnyPoints } from '@hs/example-point-cloud-input';
import type { ScanToVolumeOptions } from '../src/pipeline.js';

/** The flagship's options for a quick run: the bundled bunny at 0.5 world units per voxel, 6 scans, one sweep at 1 kHz into `outDir`. */
export function smallBunny(outDir: string, extra: Partial<ScanToVolumeOptions> = {}): ScanToVolumeOptions {
  return { cloud: bunnyPoints(), voxelSize: 0.5, scans: 6, sweeps: 1, rateHz: 1000, outDir, ...extra };
}
