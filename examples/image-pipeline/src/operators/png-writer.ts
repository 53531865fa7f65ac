import { join } from 'node:path';
import { type ExecutionContext, type InputPort, Operator, type OperatorSpec } from '@hs/compiler';
import { ErrorCode, type HsError, MemoryKind, OK_VOID, err, errWithContext, writeFileAtomic, type Result } from '@hs/streams';
import { createOutputDirectory } from '@hs/runtime';
import { DType } from '@hs/tensor';
import { PNG } from 'pngjs';
import { MAX_FRAME_FILES, frameFileName } from '../frame-output-dir.js';
import { checkPackedImage } from './packed-image.js';
import { StagingBuffer } from './staging-buffer.js';

/** Options of `PngWriter`. */
export interface PngWriterOptions {
  /**
   * Directory the frames are written to; created (with parents) when the first frame arrives. Files
   * already there are overwritten, not cleared: call `prepareOutputDir` first for a clean directory.
   */
  readonly outDir: string;
  /** Largest frame accepted, in bytes (`H * W` of the largest grey frame); sizes the staging buffer. */
  readonly maxFrameBytes: number;
}

/**
 * Sink: writes every received grey uint8 frame `[H, W]` (CUDA device memory) to
 * `<outDir>/frame-00000.png`, `frame-00001.png`, ... (`frameFileName`) as an 8-bit greyscale PNG; at
 * most `MAX_FRAME_FILES` frames per run (a further frame fails the run with `ErrorCode.InvalidArgument`).
 * Each file is written with `writeFileAtomic` of @hs/streams (an O_EXCL|O_NOFOLLOW staging file with a
 * random name, then a rename): a symlink or FIFO planted at a frame's path is replaced, never written
 * through or blocked on, and a symlinked output directory is refused (InvalidArgument).
 * A file that cannot be written fails the run with `fileSystemError`'s typed error naming the OS code,
 * such as `cannot write '<path>': EISDIR: illegal operation on a directory` (the runtime puts the
 * operator's name first): `ErrorCode.PermissionDenied` for EACCES/EPERM, `ErrorCode.NotFound` for ENOENT,
 * `ErrorCode.InvalidArgument` otherwise (a directory in the way, a full device).
 *
 * Per frame: `copyToHostAsync` enqueues the device-to-host copy into a staging buffer allocated once
 * at construction, on the operator's compute stream (behind the producer's readiness, which the runtime
 * already waited for on that stream); `compute()` then awaits `synchronizeStream` on that stream, the
 * explicit host wait (its rejection, an `HsError`, fails the run like a returned error), and writes
 * the file with non-blocking `fs/promises` calls. The JS thread never blocks; the scheduler runs other
 * operators while this activation awaits.
 *
 * Spec: "Host access: the only blocking calls".
 */
export class PngWriter extends Operator {
  /** Input port `frames`: cudaDevice uint8 rank 2. */
  frames!: InputPort;
  private readonly staging: StagingBuffer;
  /** Creation of the output directory, started by the first frame. */
  private outDirReady: Promise<void> | null = null;
  private readonly paths: string[] = [];

  constructor(
    name: string,
    private readonly options: PngWriterOptions,
  ) {
    super(name);
    this.staging = new StagingBuffer(options.maxFrameBytes);
  }

  /** Paths of the PNG files written so far, in frame order. */
  get written(): readonly string[] {
    return this.paths;
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const frame = ctx.receive(this.frames);
    if (frame === undefined) return OK_VOID;
    const layout = checkPackedImage(frame, this.frames, 1);
    if (!layout.ok) return layout;
    const height = frame.shape[0]!;
    const width = frame.shape[1]!;
    const pixels = this.staging.view(frame.byteSize, this.name);
    if (!pixels.ok) return pixels;

    const stream = ctx.cudaStream();
    const copied = frame.copyToHostAsync(pixels.value, stream);
    if (!copied.ok) return copied;
    await ctx.backend.synchronizeStream(stream); // a rejection (HsError) fails this activation

    // pngjs reads only width, height and data from its PNG argument; grey in (inputColorType 0), grey out.
    const image = { width, height, data: Buffer.from(pixels.value.buffer, pixels.value.byteOffset, pixels.value.byteLength) };
    const encoded = PNG.sync.write(image as PNG, { colorType: 0, inputColorType: 0, bitDepth: 8 });
    this.outDirReady ??= createOutputDirectory(this.options.outDir);
    try {
      await this.outDirReady;
    } catch (thrown) {
      return errWithContext(thrown as HsError, this.name);
    }
    if (this.paths.length === MAX_FRAME_FILES) {
      return err(ErrorCode.InvalidArgument, `${this.name}: more than ${MAX_FRAME_FILES} frames; frame file names have five digits`);
    }
    const path = join(this.options.outDir, frameFileName(this.paths.length));
    try {
      await writeFileAtomic(path, encoded, { label: `'${path}'` }); // a symlink planted at `path` is replaced, not followed
    } catch (thrown) {
      return { ok: false, error: thrown as HsError };
    }
    this.paths.push(path);
    return OK_VOID;
  }
}
