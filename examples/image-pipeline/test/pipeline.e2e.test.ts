import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunSession } from '@hs/runtime';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import baboonDataUri from 'baboon-image-uri';
import { decode as decodeJpeg } from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledMandrill, loadImageFiles, type RgbaImage } from '../src/image-input.js';
import { DEFAULT_IMAGE_BOUNDS, buildImagePipeline } from '../src/pipeline.js';
import { encodeJpegImage, encodePng, patternRgba, writeFixture } from './fixture-images.js';
import { referenceDownscale, referenceGray } from './reference-image-math.js';

/** What a frame must look like, computed here from independently decoded RGBA. */
interface ExpectedFrame {
  readonly width: number;
  readonly height: number;
  readonly pixels: readonly number[];
}

function expectedFrame(rgba: Uint8Array, width: number, height: number): ExpectedFrame {
  return referenceDownscale(referenceGray(rgba, width, height), width, height);
}

/** Runs the pipeline on a host backend with the ordering checker on; returns what it produced (rejects as `run()` does). */
async function runPipeline(images: readonly RgbaImage[], frames: number, outDir: string) {
  const backend = new HostBackend({ orderingChecker: true });
  try {
    const pipeline = unwrap(buildImagePipeline({ images, frames, rateHz: 1000, outDir }));
    const session = unwrap(RunSession.create(pipeline.plan, { backend }));
    try {
      const metrics = await session.run();
      return { pipeline, metrics, violations: backend.orderingChecker?.violations ?? [] };
    } finally {
      session.dispose();
    }
  } finally {
    backend.dispose();
  }
}

/** Reads every frame PNG in `dir`, in name order, as grey pixels; checks each file is 8-bit greyscale. */
async function readFrames(dir: string): Promise<{ name: string; width: number; height: number; pixels: number[] }[]> {
  const names = (await readdir(dir)).filter((n) => /^frame-\d{5}\.png$/.test(n)).sort();
  const frames = [];
  for (const name of names) {
    const png = PNG.sync.read(await readFile(join(dir, name)));
    expect(png.colorType).toBe(0);
    expect(png.depth).toBe(8);
    const pixels: number[] = [];
    for (let p = 0; p < png.width * png.height; p++) {
      const [r, g, b, a] = [png.data[p * 4]!, png.data[p * 4 + 1]!, png.data[p * 4 + 2]!, png.data[p * 4 + 3]!];
      expect(g === r && b === r && a === 255).toBe(true);
      pixels.push(r);
    }
    frames.push({ name, width: png.width, height: png.height, pixels });
  }
  return frames;
}

function expectFrameEquals(actual: { name: string; width: number; height: number; pixels: number[] }, expected: ExpectedFrame): void {
  expect([actual.name, actual.width, actual.height]).toEqual([actual.name, expected.width, expected.height]);
  const wrong = actual.pixels.findIndex((v, i) => v !== expected.pixels[i]);
  expect(wrong, `${actual.name}: first differing pixel index`).toBe(-1);
  expect(actual.pixels.length).toBe(expected.pixels.length);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-image-pipeline-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('image pipeline end to end (host backend)', () => {
  it('turns the bundled mandrill into 64x64 grey PNGs that match an independent computation', async () => {
    const direct = PNG.sync.read(Buffer.from(baboonDataUri.slice(baboonDataUri.indexOf(',') + 1), 'base64'));
    const expected = expectedFrame(direct.data, direct.width, direct.height);
    const outDir = join(dir, 'mandrill');
    const { pipeline, metrics, violations } = await runPipeline([unwrap(loadBundledMandrill(DEFAULT_IMAGE_BOUNDS))], 3, outDir);

    const frames = await readFrames(outDir);
    expect(frames.map((f) => f.name)).toEqual(['frame-00000.png', 'frame-00001.png', 'frame-00002.png']);
    for (const frame of frames) expectFrameEquals(frame, expected);
    expect(pipeline.pngWriter.written).toEqual(frames.map((f) => join(outDir, f.name)));
    expect(metrics.frames).toBe(3);
    expect(violations).toEqual([]);

    const stats = pipeline.statistics.statistics;
    const sum = expected.pixels.reduce((a, b) => a + b, 0);
    expect(stats.frames).toBe(3);
    expect(stats.pixels).toBe(3 * 64 * 64);
    expect(stats.mean).toBeCloseTo(sum / expected.pixels.length, 10);
    expect(stats.min).toBe(Math.min(...expected.pixels));
    expect(stats.max).toBe(Math.max(...expected.pixels));
    const histogram = new Array<number>(256).fill(0);
    for (const v of expected.pixels) histogram[v]! += 3;
    expect(stats.histogram).toEqual(histogram);
  });

  it('cycles through a generated PNG and JPEG read from files, every pixel matching', async () => {
    const pngBytes = encodePng(patternRgba(37, 23), 37, 23);
    const jpegBytes = encodeJpegImage(patternRgba(20, 14), 20, 14);
    const pngPath = await writeFixture(dir, 'pattern.png', pngBytes);
    const jpegPath = await writeFixture(dir, 'pattern.jpg', jpegBytes);
    const decodedPng = PNG.sync.read(pngBytes);
    const decodedJpeg = decodeJpeg(jpegBytes, { useTArray: true, formatAsRGBA: true });
    const expectedPng = expectedFrame(decodedPng.data, 37, 23);
    const expectedJpeg = expectedFrame(decodedJpeg.data, 20, 14);
    expect([expectedPng.width, expectedPng.height, expectedJpeg.width, expectedJpeg.height]).toEqual([18, 11, 10, 7]);

    const images = await loadImageFiles([pngPath, jpegPath], DEFAULT_IMAGE_BOUNDS);
    const outDir = join(dir, 'files', 'nested');
    const { pipeline, metrics, violations } = await runPipeline(images, 5, outDir);

    const frames = await readFrames(outDir);
    expect(frames).toHaveLength(5);
    frames.forEach((frame, i) => expectFrameEquals(frame, i % 2 === 0 ? expectedPng : expectedJpeg));
    expect(metrics.frames).toBe(5);
    for (const pool of metrics.pools) {
      expect(pool.exhaustions).toBe(0);
    }
    expect(violations).toEqual([]);
    const pixels = 3 * expectedPng.pixels.length + 2 * expectedJpeg.pixels.length;
    expect(pipeline.statistics.statistics.pixels).toBe(pixels);
  });

  it('fails the run with a typed error naming the writer when the output directory cannot be made', async () => {
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, 'not a directory');
    await expect(runPipeline([unwrap(loadBundledMandrill(DEFAULT_IMAGE_BOUNDS))], 2, join(blocker, 'out'))).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringMatching(/png-writer.*cannot create .*a-file\/out: ENOTDIR/),
    });
  });
});
