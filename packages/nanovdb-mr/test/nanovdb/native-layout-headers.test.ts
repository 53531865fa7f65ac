// The CUDA kernels over NanoVDB grids read their layout from C++ headers in native/src/nanovdb/; the
// host builder and validator read it from grid-layout.ts and points-to-grid-workspace.ts. This test reads
// the headers' constexpr and enum values as text (no compiler, no GPU) and checks each against the
// TypeScript export of the same meaning, so changing either side alone fails here.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHECKSUM_BLOCK_BYTES, CHECKSUM_NONE } from '../../src/nanovdb/grid/grid-checksum.js';
import {
  BLIND_METADATA_SIZE,
  BlindMeta,
  DATA_ALIGNMENT,
  FLOAT_LAYOUT,
  FORMAT_VERSION,
  GRID_DATA_SIZE,
  GRID_MAGIC,
  Grid,
  GridFlags,
  GridType,
  Internal,
  LOWER,
  Leaf,
  LOWER_SIZE,
  ON_INDEX_LAYOUT,
  ROOT_OFFSET,
  ROOT_TILE_SIZE,
  Root,
  TREE_DATA_SIZE,
  Tile,
  Tree,
  UPPER,
  UPPER_SIZE,
  valueLayoutOf,
  type ValueLayout,
} from '../../src/nanovdb/grid/grid-layout.js';
import { CANONICAL_F32_NAN, CANONICAL_F64_NAN_HIGH } from '../../src/nanovdb/grid/scalar-io.js';
import { MAX_DEVICE_POINTS } from '../../src/nanovdb/build/point-spans.js';
import { PointEncoding } from '../../src/nanovdb/build/points-to-grid-kernels.js';
import { Overflow, ReportWord, TEMPLATE_OFFSET, WORKSPACE_HEADER_BYTES, workspaceBytes } from '../../src/nanovdb/build/points-to-grid-workspace.js';

const DOUBLE = valueLayoutOf(GridType.Double) as ValueLayout;
const INT32 = valueLayoutOf(GridType.Int32) as ValueLayout;
const VEC3F = valueLayoutOf(GridType.Vec3f) as ValueLayout;
const RGBA8 = valueLayoutOf(GridType.RGBA8) as ValueLayout;
const MASK = valueLayoutOf(GridType.Mask) as ValueLayout;

/** The header's four constants of a value grid type (`k<Type>RootDataSize`, `...RootBackground`, `...LeafSize`, `...LeafValues`). */
function valueLayoutTwins(prefix: string, layout: ValueLayout): Record<string, number> {
  return {
    [`k${prefix}RootDataSize`]: layout.rootDataSize,
    [`k${prefix}RootBackground`]: layout.rootBackground,
    [`k${prefix}LeafSize`]: layout.leafSize,
    [`k${prefix}LeafValues`]: layout.leafValues,
  };
}

const NATIVE_NANOVDB = join(resolve(dirname(fileURLToPath(import.meta.url)), '../../../..'), 'native/src/nanovdb');

function headerText(name: string): string {
  return readFileSync(join(NATIVE_NANOVDB, name), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
}

/** Evaluates a C++ integer constant expression over literals and earlier constants (+ - * / % << >> | & ^ ~, parentheses). */
function evaluate(expr: string, known: ReadonlyMap<string, bigint>): bigint {
  const token = /\s*(?:(0x[0-9a-f]+|\d+)(?:ull|ul|ll|u|l)?|([a-z_]\w*)|(<<|>>|[-+*/%|&^~()]))/giy;
  let js = '';
  let at = 0;
  while (at < expr.trim().length) {
    token.lastIndex = at;
    const m = token.exec(expr.trim());
    if (m === null) throw new Error(`cannot read "${expr}" at ${at}`);
    if (m[1] !== undefined) js += `${BigInt(m[1])}n`;
    else if (m[2] !== undefined) {
      const v = known.get(m[2]);
      if (v === undefined) throw new Error(`"${expr}" uses ${m[2]}, which is not defined above it`);
      js += `${v}n`;
    } else js += ` ${m[3]} `;
    at = token.lastIndex;
  }
  return (new Function(`return (${js});`) as () => bigint)();
}

/** Splits `a = 1, b = (2, 3)`-style lists at top-level commas. */
function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

interface Header {
  /** Every `constexpr` value and every enumerator, by name. */
  readonly values: ReadonlyMap<string, bigint>;
  /** Enumerator names by enum name. */
  readonly enums: ReadonlyMap<string, readonly string[]>;
  readonly text: string;
}

/** Reads the `constexpr T kName = expr` declarations and the `enum Name : T { kName = expr, ... }` blocks of a header. */
function readHeader(name: string): Header {
  const text = headerText(name);
  const values = new Map<string, bigint>();
  const enums = new Map<string, string[]>();
  const define = (decl: string): string => {
    const m = /^(k\w+)\s*=\s*([\s\S]+)$/.exec(decl);
    if (m === null) throw new Error(`${name}: cannot read the declaration "${decl}"`);
    const [, id, expr] = m as unknown as [string, string, string];
    if (values.has(id)) throw new Error(`${name}: ${id} is defined twice`);
    values.set(id, evaluate(expr, values));
    return id;
  };
  const statement = /constexpr\s+[\w:]+\s+([^;]+);|enum\s+(\w+)\s*:\s*[\w:]+\s*\{([^}]*)\}/g;
  for (const m of text.matchAll(statement)) {
    if (m[1] !== undefined) splitTopLevel(m[1]).forEach(define);
    else enums.set(m[2] as string, splitTopLevel(m[3] as string).map(define));
  }
  return { values, enums, text };
}

/** Every constant of the header must be in `twins`, and every twin in the header, with equal values. */
function expectTwins(header: Header, file: string, twins: Record<string, number | bigint>, deviceOnly: readonly string[] = []): void {
  const mismatches: string[] = [];
  for (const [id, ts] of Object.entries(twins)) {
    const cpp = header.values.get(id);
    if (cpp === undefined) mismatches.push(`${id}: missing from ${file}`);
    else if (cpp !== BigInt(ts)) mismatches.push(`${id}: ${file} says ${cpp}, TypeScript says ${ts}`);
  }
  for (const id of header.values.keys()) {
    if (!(id in twins) && !deviceOnly.includes(id)) mismatches.push(`${id} (${file}) has no TypeScript twin in this test's table: add one, or list it as device-only`);
  }
  expect(mismatches).toEqual([]);
}

describe('native/src/nanovdb/grid-layout.h', () => {
  const header = readHeader('grid-layout.h');

  it('holds the NanoVDB 32.9 layout of grid-layout.ts, constant for constant', () => {
    expectTwins(header, 'grid-layout.h', {
      kGridMagic: GRID_MAGIC,
      kFormatVersion: FORMAT_VERSION,
      kDataAlignment: DATA_ALIGNMENT,
      kGridDataSize: GRID_DATA_SIZE,
      kTreeDataSize: TREE_DATA_SIZE,
      kRootOffset: ROOT_OFFSET,
      kRootTileSize: ROOT_TILE_SIZE,
      kUpperSize: UPPER_SIZE,
      kLowerSize: LOWER_SIZE,
      kGridChecksum: Grid.checksum,
      kGridVersion: Grid.version,
      kGridGridSize: Grid.gridSize,
      kGridVecD: Grid.vecD,
      kGridWorldBBox: Grid.worldBBox,
      kGridVoxelSize: Grid.voxelSize,
      kGridGridType: Grid.gridType,
      kGridBlindMetadataOffset: Grid.blindMetadataOffset,
      kGridBlindMetadataCount: Grid.blindMetadataCount,
      kBlindMetadataSize: BLIND_METADATA_SIZE,
      kBlindValueCount: BlindMeta.valueCount,
      kGridData1: Grid.data1,
      kTreeNodeOffset: Tree.nodeOffset,
      kTreeNodeCount: Tree.nodeCount,
      kTreeVoxelCount: Tree.voxelCount,
      kRootDataBBox: Root.bbox,
      kRootDataTableSize: Root.tableSize,
      kTileKey: Tile.key,
      kTileChild: Tile.child,
      kInternalBBox: Internal.bbox,
      kInternalFlags: Internal.flags,
      kInternalValueMask: Internal.valueMask,
      kUpperLog2Dim: UPPER.log2Dim,
      kUpperChildLog2: UPPER.childLog2,
      kLowerLog2Dim: LOWER.log2Dim,
      kLowerChildLog2: LOWER.childLog2,
      kUpperMaskBytes: UPPER.maskBytes,
      kLowerMaskBytes: LOWER.maskBytes,
      kUpperChildMask: UPPER.childMask,
      kLowerChildMask: LOWER.childMask,
      kUpperTable: UPPER.table,
      kLowerTable: LOWER.table,
      // a lower node's child is a leaf: the leaf's voxels per axis
      kLeafLog2Dim: LOWER.childLog2,
      kLeafBBoxMin: Leaf.bboxMin,
      kLeafBBoxDif: Leaf.bboxDif,
      kLeafFlags: Leaf.flags,
      kLeafValueMask: Leaf.valueMask,
      kHasBBox: GridFlags.HasBBox,
      kGridTypeFloat: GridType.Float,
      kGridTypeDouble: GridType.Double,
      kGridTypeInt32: GridType.Int32,
      kGridTypeVec3f: GridType.Vec3f,
      kGridTypeMask: GridType.Mask,
      kGridTypeRGBA8: GridType.RGBA8,
      kGridTypeOnIndex: GridType.OnIndex,
      kTableEntrySize: UPPER.tableStride,
      kFloatRootDataSize: FLOAT_LAYOUT.rootDataSize,
      kFloatRootBackground: FLOAT_LAYOUT.rootBackground,
      kFloatLeafSize: FLOAT_LAYOUT.leafSize,
      kFloatLeafValues: FLOAT_LAYOUT.leafValues,
      ...valueLayoutTwins('Double', DOUBLE),
      ...valueLayoutTwins('Int32', INT32),
      ...valueLayoutTwins('Vec3f', VEC3F),
      kVec3fUpperSize: VEC3F.upper.size,
      kVec3fLowerSize: VEC3F.lower.size,
      kVec3fTableEntrySize: VEC3F.upper.tableStride,
      ...valueLayoutTwins('Rgba8', RGBA8),
      kMaskRootDataSize: MASK.rootDataSize,
      kMaskRootBackground: MASK.rootBackground,
      kMaskLeafSize: MASK.leafSize,
      kOnIndexRootDataSize: ON_INDEX_LAYOUT.rootDataSize,
      kOnIndexLeafSize: ON_INDEX_LAYOUT.leafSize,
      kOnIndexLeafOffset: ON_INDEX_LAYOUT.leafValues,
      // grid-writer.ts writes the prefix sums right after the leaf's offset
      kOnIndexLeafPrefixSum: ON_INDEX_LAYOUT.leafValues + 8,
      kChecksumBlockBytes: CHECKSUM_BLOCK_BYTES,
      kChecksumNone: CHECKSUM_NONE,
    });
  });

  it('gives every type the write kernel writes the tiles, table offsets and node sizes it assumes', () => {
    const v = (id: string): number => Number(header.values.get(id));
    for (const layout of [FLOAT_LAYOUT, DOUBLE, INT32, VEC3F, RGBA8, MASK, ON_INDEX_LAYOUT]) {
      const name = GridType[layout.gridType];
      expect(layout.tileSize, name).toBe(v('kRootTileSize'));
      expect([layout.upper.table, layout.lower.table], name).toEqual([v('kUpperTable'), v('kLowerTable')]);
      expect(layout.upper.tableStride, name).toBe(layout.lower.tableStride);
      if (layout !== VEC3F) expect([layout.upper.size, layout.lower.size, layout.upper.tableStride], name).toEqual([v('kUpperSize'), v('kLowerSize'), v('kTableEntrySize')]);
    }
  });

  it('is read the way the compiler reads it (expressions over earlier constants)', () => {
    expect(header.values.get('kRootOffset')).toBe(736n);
    expect(header.values.get('kFormatVersion')).toBe(0x04002402n);
    expect(() => evaluate('kNotDefined + 1', header.values)).toThrow(/not defined/);
  });
});

describe('native/src/nanovdb/points-to-grid-workspace.h', () => {
  const header = readHeader('points-to-grid-workspace.h');
  // The device build's own report words (not read on the host) with their widths in u32 words, and the CUB
  // scratch formula, which the workspaceBytes check below covers.
  const deviceWordWidths: Record<string, number> = { kInvalidMin: 1, kInvalidCount: 1, kUpperStart: 2, kLowerStart: 2, kLeafStart: 2, kAxisMin: 3, kAxisMax: 3, kKeyBits: 1 };
  const deviceReportWords = Object.keys(deviceWordWidths);
  const reportTwins = Object.fromEntries(Object.entries(ReportWord).map(([word, index]) => [`k${word[0]!.toUpperCase()}${word.slice(1)}`, index]));

  it('holds the report words, overflow bits and header offsets of points-to-grid-workspace.ts', () => {
    expect(header.enums.get('ReportWord')?.filter((w) => !deviceReportWords.includes(w)).sort()).toEqual(Object.keys(reportTwins).sort());
    expect(header.enums.get('Overflow')).toEqual(['kOverflowPoints', 'kOverflowUppers', 'kOverflowLowers', 'kOverflowLeaves']);
    expectTwins(
      header,
      'points-to-grid-workspace.h',
      {
        ...reportTwins,
        kOverflowPoints: Overflow.Points,
        kOverflowUppers: Overflow.Uppers,
        kOverflowLowers: Overflow.Lowers,
        kOverflowLeaves: Overflow.Leaves,
        kMaxPoints: MAX_DEVICE_POINTS,
        kWorkspaceHeaderBytes: WORKSPACE_HEADER_BYTES,
        kTemplateOffset: TEMPLATE_OFFSET,
      },
      [...deviceReportWords, 'kRegionAlignment', 'kCubBytesPerPoint', 'kCubFixedBytes'],
    );
  });

  it("keeps the device's own report words clear of the host's and inside the report (before the template)", () => {
    const v = (id: string): number => Number(header.values.get(id));
    const hostWords = new Set<number>();
    for (const [id, index] of Object.entries(reportTwins)) {
      const width = id === 'kGridSize' ? 2 : id === 'kRootBBox' ? 6 : 1; // u64, i32x6
      for (let i = 0; i < width; i++) hostWords.add(index + i);
    }
    const deviceWords = new Map<number, string>();
    for (const id of deviceReportWords) {
      const width = deviceWordWidths[id] as number;
      for (let i = 0; i < width; i++) {
        expect(hostWords.has(v(id) + i), `${id} overlaps a host report word`).toBe(false);
        expect(deviceWords.get(v(id) + i), `${id} overlaps another device report word`).toBeUndefined();
        deviceWords.set(v(id) + i, id);
        // InitReport clears words 0..63 only
        expect(v(id) + i).toBeLessThan(64);
        expect(4 * (v(id) + i)).toBeLessThan(TEMPLATE_OFFSET);
      }
    }
  });

  it("carves the workspace workspaceBytes(n, 'cuda') sizes", () => {
    const carve = /inline Workspace Carve\([^)]*\)\s*\{([\s\S]*?)\n\}/.exec(header.text)?.[1] ?? '';
    const takes = [...carve.matchAll(/take\((?:(\d+) \* n|(CubBytes)\(n\))\)/g)];
    expect(takes.length).toBe(10);
    const v = (id: string): number => Number(header.values.get(id));
    const region = (bytes: number): number => Math.ceil(bytes / v('kRegionAlignment')) * v('kRegionAlignment');
    for (const n of [0, 1, 3, 31, 32, 1000, 123_457, 2 ** 32 - 1]) {
      const cub = v('kCubBytesPerPoint') * n + v('kCubFixedBytes');
      const carved = takes.reduce((at, t) => at + region(t[2] !== undefined ? cub : Number(t[1]) * n), v('kWorkspaceHeaderBytes'));
      expect(carved, `n = ${n}`).toBe(workspaceBytes(n, 'cuda'));
    }
  });
});

describe('native/src/nanovdb/points-to-grid-sort.h', () => {
  it('numbers the point encodings as PointEncoding does (the sort branches are device-only)', () => {
    const header = readHeader('points-to-grid-sort.h');
    expectTwins(
      header,
      'points-to-grid-sort.h',
      {
        kIndexInt32: PointEncoding.IndexInt32,
        kWorldFloat32: PointEncoding.WorldFloat32,
        kWorldFloat64: PointEncoding.WorldFloat64,
      },
      ['kSortBranches', 'kSortBranchBits'],
    );
  });
});

describe('native/src/nanovdb/canonical-nan.h', () => {
  it('stores the canonical NaN the host builders store', () => {
    expectTwins(readHeader('canonical-nan.h'), 'canonical-nan.h', {
      kCanonicalF32NaN: CANONICAL_F32_NAN,
      kCanonicalF64NaN: BigInt(CANONICAL_F64_NAN_HIGH) << 32n,
    });
  });
});
