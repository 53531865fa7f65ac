import { Readable, Writable } from 'node:stream';

/**
 * Baseline: a Node `Readable -> Writable` object-mode pipe passing `frames` preallocated frames of
 * `frameBytes` bytes (round-robin over `poolSize` buffers, as a pool would). Returns ns per frame.
 */
export async function nodeStreamNsPerFrame(frames: number, frameBytes: number, poolSize: number, highWaterMark: number): Promise<number> {
  const buffers = Array.from({ length: poolSize }, () => new Uint8Array(frameBytes));
  let produced = 0;
  let consumed = 0;
  const source = new Readable({
    objectMode: true,
    highWaterMark,
    read() {
      while (produced < frames) {
        const frame = buffers[produced % poolSize]!;
        frame[0] = produced & 0xff;
        produced += 1;
        if (!this.push(frame)) return;
      }
      this.push(null);
    },
  });
  const sink = new Writable({
    objectMode: true,
    highWaterMark,
    write(frame: Uint8Array, _encoding, done) {
      consumed += frame[0]! >= 0 ? 1 : 0;
      done();
    },
  });
  const start = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    sink.on('finish', resolve);
    sink.on('error', reject);
    source.pipe(sink);
  });
  const elapsed = Number(process.hrtime.bigint() - start);
  if (consumed !== frames) throw new Error(`baseline lost frames: ${consumed}/${frames}`);
  return elapsed / frames;
}
