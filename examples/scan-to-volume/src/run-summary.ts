import { HostResource, readNvdb, validateGrids } from '@hs/nanovdb-mr';
import { HostBackend, errWithContext, ok, readRegularFileSync, type Result } from '@hs/streams';
import { StreamPointsToGridOperator } from './operators/stream-points-to-grid-operator.js';
import type { ScanToVolumeGraph } from './pipeline.js';

/** What re-reading the written `.nvdb` file found. */
export interface VolumeCheck {
  readonly fileBytes: number;
  readonly gridName: string;
  readonly voxelCount: number;
  readonly gridBytes: number;
}

/**
 * Re-reads a `.nvdb` file with hs (`readNvdb` into host memory) and validates its one grid again with its
 * checksum (`validateGrids`).
 * @returns the figures; `readRegularFileSync`'s error for a missing or unreadable file (InvalidArgument for
 *   a FIFO or anything not a regular file), the decoder's or the
 *   validator's InvalidArgument (naming the first bad field), prefixed with the path.
 */
export function checkVolumeFile(path: string): Result<VolumeCheck> {
  const read = readRegularFileSync(path); // a FIFO planted at `path` is refused, not waited on
  if (!read.ok) return read;
  const file: Uint8Array = read.value;
  const backend = new HostBackend();
  try {
    const handles = readNvdb(backend, new HostResource(backend), file);
    if (!handles.ok) return errWithContext(handles.error, path);
    const [handle] = handles.value;
    try {
      const bytes = handle!.hostBytes();
      if (!bytes.ok) return errWithContext(bytes.error, path);
      const grids = validateGrids(bytes.value, { checksum: true });
      if (!grids.ok) return errWithContext(grids.error, path);
      const grid = grids.value[0]!;
      return ok({ fileBytes: file.byteLength, gridName: grid.name, voxelCount: grid.voxelCount, gridBytes: grid.gridSize });
    } finally {
      for (const h of handles.value) h.dispose();
    }
  } finally {
    backend.dispose();
  }
}

/**
 * The lines printed after a run: the stream, the volume and its independent voxel count, the builder and
 * (stream builder) its build report, the re-read of the `.nvdb` file, the preview, and the statistics of
 * the resource the builder allocated through (a build split by space: the split, and each part's builder
 * and resource), e.g.
 * `volume: 1839 active voxels (1839 expected from the whole cloud), 1257152-byte OnIndex grid`; a run
 * that ended early (Ctrl-C) reports the volume of the scans done, from the last grid built:
 * `volume of the 40 scans done (the run ended before its 3600 scans): ...`.
 * @returns the lines, or `checkVolumeFile`'s error when the written file does not read back, or the
 *   backend's error when the stream builder's report could not be read back.
 */
export function runSummaryLines(built: ScanToVolumeGraph, source: string, rateHz: number): Result<string[]> {
  const { builder, nvdbWriter, pngWriter, preview, camera, sizing, split } = built;
  const state =
    split === null
      ? builder.accumulated
      : {
          scans: split.merge.accumulated.frames,
          points: split.scanPartition.accumulated.points,
          voxelCount: split.parts.reduce((sum, part) => sum + part.builder.accumulated.voxelCount, 0),
          gridBytes: split.merge.accumulated.gridBytes,
        };
  const volume = state.scans < built.frames ? `volume of the ${state.scans} scans done (the run ended before its ${built.frames} scans)` : 'volume';
  const lines = [
    `streamed ${state.scans} scans (${built.sweep.scans.length} per sweep) at ${rateHz} Hz nominal: ${state.points} points from ${source}`,
    `${volume}: ${state.voxelCount} active voxels (${sizing.voxelCount} expected from the whole cloud), ${state.gridBytes}-byte OnIndex grid`,
  ];
  if (split === null) {
    const report = builderLine(builder);
    if (!report.ok) return report;
    lines.push(report.value);
  } else {
    lines.push(
      `split by space into ${split.parts.length} parts by root tile, merged on the host every scan: ` +
        split.parts.map((part, i) => `part ${i} on ${part.device.toString()} ${part.tiles} root tiles, ${part.points} points`).join('; '),
    );
    for (let i = 0; i < split.parts.length; i++) {
      const report = builderLine(split.parts[i]!.builder);
      if (!report.ok) return report;
      lines.push(`part ${i} ${report.value}`);
    }
  }
  if (nvdbWriter.written > 0) {
    const check = checkVolumeFile(nvdbWriter.path);
    if (!check.ok) return check;
    lines.push(`wrote ${nvdbWriter.path} ${nvdbWriter.written} times (last ${check.value.fileBytes} bytes); re-read by hs: grid "${check.value.gridName}", ${check.value.voxelCount} voxels, ${check.value.gridBytes} bytes, checksum and structure valid`);
  }
  lines.push(`preview: ${pngWriter.path} (${camera.width}x${camera.height}, ${preview.previews} previews rendered, 1 scan in 4 and the last)`);
  const adaptors = split === null ? [['', built.statistics()] as const] : split.parts.map((part, i) => [`part ${i} `, part.statistics()] as const);
  for (const [who, adaptor] of adaptors) {
    const stats = adaptor?.statistics;
    if (stats === undefined) continue;
    lines.push(
      `${who}resource (StatisticsResource): ${stats.allocations.total} allocations (${stats.allocations.current} outstanding), ` +
        `peak ${stats.bytes.peak} bytes, total ${stats.bytes.total} bytes, ${stats.bytes.current} bytes outstanding`,
    );
  }
  const pools = [...built.poolStatistics()].map(([kind, counted]) => {
    const { allocations, bytes } = counted.statistics;
    return `${kind} ${allocations.total} allocations, ${bytes.total} bytes`;
  });
  if (pools.length > 0) lines.push(`pool backings (StatisticsResource per memory kind): ${pools.join('; ')}`);
  return ok(lines);
}

/**
 * Says which builder ran; for the stream builder, what its report (read once, after the last scan or when
 * the run ended early) says about the last build: points read, voxels and nodes written, and any capacity
 * that overflowed (the grid is then a clamped prefix of the volume, still valid), or that no scan was built.
 */
function builderLine(builder: ScanToVolumeGraph['builder']): Result<string> {
  if (!(builder instanceof StreamPointsToGridOperator)) return ok('builder: host (previous grid merged with each scan on the host)');
  const report = builder.report;
  const repeated = builder.repeatedPoints > 0 ? `; ${builder.repeatedPoints} re-delivered points of later sweeps not appended` : '';
  if (report === null) return ok(`builder: stream; no build report (no scan was built)${repeated}`);
  if (!report.ok) return errWithContext(report.error, 'reading the stream builder report');
  const r = report.value;
  const { points, uppers, lowers, leaves } = builder.capacity;
  const overflowed = (Object.keys(r.overflow) as (keyof typeof r.overflow)[]).filter((key) => r.overflow[key]);
  const verdict = overflowed.length === 0 ? 'no capacity overflowed' : `OVERFLOW of ${overflowed.join(', ')}: the grid is a clamped prefix of the volume (still valid), needed ${JSON.stringify(r.needed)}`;
  return ok(
    `builder: stream, one bounded build per scan (capacity ${points} points, ${uppers} upper, ${lowers} lower, ${leaves} leaf nodes); ` +
      `last build read ${r.used} of ${r.given} points, wrote ${r.counts.voxels} voxels in ${r.counts.leaves} leaves, ${r.gridSize} bytes; ${verdict}${repeated}`,
  );
}
