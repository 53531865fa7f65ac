import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile } from '@hs/compiler';
import { unwrap } from '@hs/streams';
import { bunnyPoints } from '../../../examples/point-cloud-input/src/load-points.js';
import { MAX_SCAN_RATE_HZ } from '../../../examples/scan-to-volume/src/operators/scan-source.js';
import { buildScanToVolumeGraph } from '../../../examples/scan-to-volume/src/pipeline.js';
import { soak, type SoakOptions, type SoakOutcome } from './soak.js';

/** Scans per sweep of the flagship soak (the example's default). */
export const FLAGSHIP_SOAK_SCANS = 36;

/**
 * Scans `pnpm soak` runs through the flagship by default (`HS_SOAK_FLAGSHIP_FRAMES`; rounded up to whole
 * sweeps: 1 000 008). Every scan is real work of the example: a bounded build over up to 1 839 points, a
 * 1.2 MB grid checksummed by the builder and again by the `.nvdb` writer's validation, a 1.2 MB file
 * written and renamed, and one scan in four a 512x490 preview rendered and PNG-encoded. On the 2-core
 * machine that is about 4 ms of CPU per scan on the host backend (it was 7 ms until the preview PNG took
 * only pngjs's Up filter): the default run took 1 000 008 scans in 5 092 s (196 scans/s, with other work
 * on the machine at times), the whole `pnpm soak` 87 minutes. `HS_SOAK_FLAGSHIP_FRAMES` sets a shorter run.
 */
export const FLAGSHIP_SOAK_DEFAULT_SCANS = 1_000_000;

/**
 * Fraction of the flagship soak's scans before its memory baseline (default for `flagshipSoak`). Heap
 * snapshots at scans 156 and 902 differ only in V8 code objects (optimized code, deopt data, relocation
 * info: about +430 KB, no hs or example objects), which settle after several hundred scans of two grid
 * builds each, so the baseline is taken half-way.
 */
export const FLAGSHIP_WARMUP_FRACTION = 0.5;

/** What a flagship soak measured, on top of `SoakOutcome`. */
export interface FlagshipSoakOutcome extends SoakOutcome {
  /** Active voxels of the last grid, and of the whole cloud (they must match). */
  readonly voxelCount: number;
  readonly expectedVoxelCount: number;
  /** Bytes still allocated through the builder's StatisticsResource after the run (must be 0). */
  readonly resourceBytesOutstanding: number;
  /** Grids written as .nvdb and previews written as PNG. */
  readonly nvdbWrites: number;
  readonly previews: number;
}

/**
 * Soaks the flagship graph (examples/scan-to-volume): the bundled bunny at voxel size 0.5, 36 scans per
 * sweep, as many sweeps as it takes to reach at least `options.frames` scans (the frame count is rounded
 * up to whole sweeps), at the source's fastest rate, `.nvdb` codec none, files in a temporary folder
 * removed afterwards; the memory baseline is taken after `FLAGSHIP_WARMUP_FRACTION` of the scans unless
 * `options.warmupFraction` says otherwise. The measurements are `soak`'s (leaked slots, live handles, stream and event counts,
 * heap and RSS after warm-up, device memory on CUDA), plus the volume and the resource's balance.
 */
export async function flagshipSoak(options: Omit<SoakOptions, 'plan'>): Promise<FlagshipSoakOutcome> {
  const sweeps = Math.max(1, Math.ceil(options.frames / FLAGSHIP_SOAK_SCANS));
  const outDir = mkdtempSync(join(tmpdir(), 'hs-flagship-soak-'));
  try {
    const built = unwrap(
      buildScanToVolumeGraph({ cloud: bunnyPoints(), voxelSize: 0.5, scans: FLAGSHIP_SOAK_SCANS, sweeps, rateHz: MAX_SCAN_RATE_HZ, outDir, codec: 'none' }),
    );
    const plan = unwrap(compile(built.graph, built.compileOptions));
    const outcome = await soak({ warmupFraction: FLAGSHIP_WARMUP_FRACTION, ...options, frames: built.frames, plan });
    return {
      ...outcome,
      voxelCount: built.builder.accumulated.voxelCount,
      expectedVoxelCount: built.sizing.voxelCount,
      resourceBytesOutstanding: built.statistics()?.statistics.bytes.current ?? 0,
      nvdbWrites: built.nvdbWriter.written,
      previews: built.pngWriter.written,
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
