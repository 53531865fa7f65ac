import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, unwrap, type Result } from '@hs/streams';
import { bunnyPoints, loadPoints } from '../src/index.js';
import { lasFile } from './las-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-point-cloud-input-'));

describe('point-cloud input', () => {
  it('bundles the Stanford bunny', () => {
    const cloud = bunnyPoints();
    expect(cloud.positions.length).toBe(3 * 1839);
    expect(cloud.source).toContain('bunny');
  });

  it('reads PLY and XYZ inputs and reports bad ones', () => {
    const ply = join(dir, 'three.ply');
    writeFileSync(ply, 'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n1.5 2 3\n-1 -2 -3\n');
    expect(unwrap(loadPoints(ply)).positions).toEqual(new Float32Array([0, 0, 0, 1.5, 2, 3, -1, -2, -3]));
    const xyz = join(dir, 'two.xyz');
    writeFileSync(xyz, '# x y z\n1 2 3\n4 5 6 255 0 0\n');
    expect([...unwrap(loadPoints(xyz)).positions]).toEqual([1, 2, 3, 4, 5, 6]);
    writeFileSync(xyz, '1 2\n');
    expect(loadPoints(xyz).ok).toBe(false);
    expect(loadPoints(join(dir, 'missing.ply')).ok).toBe(false);
    expect(loadPoints(join(dir, 'cloud.obj')).ok).toBe(false);
  });

  it('names what is wrong with an input file', () => {
    const noZ = writeFile('no-z.ply', 'ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nend_header\n0 0\n1 2\n');
    expectMessage(loadPoints(noZ), `${noZ}: the PLY vertex element has no "z" property (it has x, y)`);
    const junk = writeFile('junk.ply', 'hello world junk\n1 2 3\n');
    expectMessage(loadPoints(junk), `${junk} is not a readable PLY file`);
    const header = 'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n';
    const short = writeFile('short.ply', `${header}0 0 0\n1 1 1\n`);
    expectMessage(loadPoints(short), `${short} is truncated: its header declares 3 vertices, the file holds 2`);
    const nan = writeFile('nan.ply', `${header}0 0 0\nnan 1 2\n1 1 1\n`);
    expectMessage(loadPoints(nan), `${nan}: vertex 1 has a non-finite coordinate (NaN or infinite)`);
    const binary = writeFile('short-binary.ply', `${header.replace('ascii', 'binary_little_endian')}${'\0'.repeat(20)}`);
    expectMessage(loadPoints(binary), `${binary} is not a readable PLY file: it ends before the data its header declares (truncated?)`);
    const folder = loadPoints(dir);
    expect(!folder.ok && folder.error.code).not.toBe(ErrorCode.NotFound);
    expectMessage(folder, 'it is a directory, not a regular file');
    expect(loadPoints(join(dir, 'missing.xyz')).ok || unwrapError(loadPoints(join(dir, 'missing.xyz'))).code).toBe(ErrorCode.NotFound);
    for (const [line, text] of [['1 2 0x10', 'hex'], ['Infinity 0 0', 'infinite'], ['NaN 1 2', 'NaN'], ['1e400 0 0', 'overflow']] as const) {
      const xyz = writeFile(`bad-${text}.xyz`, `# header\n1 2 3\n${line}\n`);
      expectMessage(loadPoints(xyz), `${xyz}:3: expected "x y z" as three finite decimal numbers, got "${line}"`);
    }
    expect([...unwrap(loadPoints(writeFile('ok.txt', '-1.5 .25 3e-2\n'))).positions]).toEqual([-1.5, 0.25, 0.03]);
  });

  it.skipIf(process.platform === 'win32')('refuses a FIFO at the input path at once instead of waiting for a writer', () => {
    const fifo = join(dir, 'planted.xyz');
    execFileSync('mkfifo', [fifo]);
    const started = performance.now();
    const loaded = loadPoints(fifo);
    expect(!loaded.ok && loaded.error.code).toBe(ErrorCode.InvalidArgument);
    expectMessage(loaded, 'it is a FIFO (named pipe), not a regular file');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('quotes at most 40 characters of a bad XYZ line, escaping binary bytes instead of echoing them', () => {
    // 5000 bytes with no line break: every byte value, control characters and invalid UTF-8 included.
    const bytes = Uint8Array.from({ length: 5000 }, (_, i) => (i * 167 + 13) % 256).map((b) => (b === 10 || b === 13 ? 0 : b));
    const binary = writeBytes('binary.xyz', bytes);
    const result = loadPoints(binary);
    expect(result.ok).toBe(false);
    const message = unwrapError(result).message;
    const quoted = message.slice(message.indexOf('got ') + 4);
    expect(message.startsWith(`InvalidArgument: ${binary}:1: expected "x y z" as three finite decimal numbers, got "`)).toBe(true);
    expect(quoted.endsWith('"...')).toBe(true);
    expect(JSON.parse(quoted.slice(0, -3)).length).toBeLessThanOrEqual(40);
    // Only printable ASCII reaches the terminal.
    expect(message).toMatch(/^[\x20-\x7e]*$/);
    const long = writeFile('long.xyz', `1 2 3\n${'9'.repeat(30)} abc ${'x'.repeat(200)}\n`);
    expectMessage(loadPoints(long), `${long}:2: expected "x y z" as three finite decimal numbers, got "${'9'.repeat(30)} abc xxxxx"...`);
    const accented = writeFile('accented.xyz', '1 2 \u00e9\u0301\u202e\n');
    expectMessage(loadPoints(accented), `${accented}:1: expected "x y z" as three finite decimal numbers, got "1 2 \\u00e9\\u0301\\u202e"`);
  });

  it('refuses a PLY header holding binary bytes, naming the line, without echoing them', () => {
    const header = 'ply\nformat ascii 1.0\nelement vertex 2\nproperty ';
    const junk = Uint8Array.from({ length: 300 }, (_, i) => (i * 151 + 7) % 256).map((b) => (b === 10 ? 0 : b));
    const tail = new TextEncoder().encode(' x\nend_header\n1\n2\n');
    const path = writeBytes('binary-header.ply', Uint8Array.from([...new TextEncoder().encode(header), ...junk, ...tail]));
    const logged: unknown[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => logged.push(args);
    let message: string;
    try {
      message = unwrapError(loadPoints(path)).message;
    } finally {
      console.log = log;
    }
    expect(message).toBe(`InvalidArgument: ${path} is not a readable PLY file: header line 4 holds byte 0x07, not printable text (binary data?)`);
    expect(logged).toEqual([]);
    const noEnd = writeFile('no-end.ply', 'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n');
    expectMessage(loadPoints(noEnd), `${noEnd} is not a readable PLY file: its header has no "end_header" line`);
  });

  it('locates each XYZ point at its file and line, comments and blank lines counted', () => {
    const xyz = writeFile('located.xyz', '# header\n1 2 3\n\n4 5 6\n# more\n7 8 9\n');
    const cloud = unwrap(loadPoints(xyz));
    expect([0, 1, 2].map((i) => cloud.pointLocation?.(i))).toEqual([`${xyz}:2`, `${xyz}:4`, `${xyz}:6`]);
    expect(bunnyPoints().pointLocation).toBeUndefined();
  });

  it.each([
    [2, 0],
    [2, 1],
    [3, 2],
    [4, 3],
  ] as const)('reads LAS 1.%i point format %i, scaled and offset, skipping extra record bytes', (minor, format) => {
    const points = [[0, 0, 0], [1.5, 2.25, -3], [100.01, -20.5, 7]] as const;
    const path = writeBytes(`cloud-${minor}-${format}.las`, lasFile({ minor, format, points, extraBytes: 3, offset: [1000, 2000, -5] }));
    const got = [...unwrap(loadPoints(path)).positions];
    points.flat().forEach((c, i) => expect(got[i]).toBeCloseTo(c, 9));
  });

  it('reads the 64-bit point count of LAS 1.4 when the legacy count is 0', () => {
    const path = writeBytes('legacy-zero.las', lasFile({ minor: 4, format: 0, points: [[1, 2, 3], [4, 5, 6]], legacyCountZero: true }));
    expect([...unwrap(loadPoints(path)).positions]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('names what is wrong with a LAS file in one typed line', () => {
    const good = lasFile({ minor: 2, format: 1, points: [[1, 2, 3], [4, 5, 6]] });
    const cases: [string, Uint8Array, ErrorCode, string][] = [
      ['not-las.las', new TextEncoder().encode('PLY? no, just text'), ErrorCode.InvalidArgument, 'not a LAS file: it does not start with "LASF"'],
      ['short.las', good.subarray(0, 100), ErrorCode.InvalidArgument, 'truncated LAS header: 100 bytes'],
      ['truncated.las', good.subarray(0, good.byteLength - 5), ErrorCode.InvalidArgument, 'truncated LAS point data: the header declares 2 points of 28 bytes'],
      ['laz.las', patch(good, (v) => v.setUint8(104, 0x81)), ErrorCode.NotSupported, 'compressed LAS (LAZ'],
      ['format6.las', patch(good, (v) => v.setUint8(104, 6)), ErrorCode.NotSupported, 'point data format 6 is not supported'],
      ['v2.las', patch(good, (v) => v.setUint8(24, 2)), ErrorCode.NotSupported, 'LAS version 2.2 is not supported'],
      ['v11.las', patch(good, (v) => v.setUint8(25, 1)), ErrorCode.NotSupported, 'LAS version 1.1 is not supported'],
      ['short-record.las', patch(good, (v) => v.setUint16(105, 20, true)), ErrorCode.InvalidArgument, 'record length 20 is shorter than point data format 1 needs (28 bytes)'],
      ['zero-scale.las', patch(good, (v) => v.setFloat64(139, 0, true)), ErrorCode.InvalidArgument, 'must be finite and non-zero'],
      ['nan-offset.las', patch(good, (v) => v.setFloat64(171, Number.NaN, true)), ErrorCode.InvalidArgument, 'offset (0, 0, NaN) finite'],
      ['bad-offset.las', patch(good, (v) => v.setUint32(96, 10, true)), ErrorCode.InvalidArgument, 'point data offset 10 is outside 227..'],
      ['empty.las', lasFile({ minor: 3, format: 0, points: [] }), ErrorCode.InvalidArgument, 'holds no points'],
    ];
    for (const [name, bytes, code, text] of cases) {
      const path = writeBytes(name, bytes);
      const r = loadPoints(path);
      expect(!r.ok && r.error.code, name).toBe(code);
      expect(!r.ok && r.error.message, name).toContain(`${path}`);
      expect(!r.ok && r.error.message, name).toContain(text);
      expect(!r.ok && r.error.message, name).not.toContain('\n');
    }
  });

  it('reports zero points in PLY and XYZ files', () => {
    expectMessage(loadPoints(writeFile('empty.xyz', '# nothing\n\n')), 'holds no points');
    expectMessage(loadPoints(writeFile('empty.ply', 'ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n')), 'holds no points');
  });
});

function patch(bytes: Uint8Array, edit: (v: DataView) => void): Uint8Array {
  const copy = bytes.slice();
  edit(new DataView(copy.buffer));
  return copy;
}

function writeBytes(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

function writeFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function unwrapError<T>(r: Result<T>): { code: ErrorCode; message: string } {
  if (r.ok) throw new Error('expected a failure');
  return r.error;
}

function expectMessage<T>(r: Result<T>, text: string): void {
  expect(unwrapError(r).code).toBe(ErrorCode.InvalidArgument);
  expect(unwrapError(r).message).toContain(text);
}
