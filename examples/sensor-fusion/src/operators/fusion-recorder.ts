import { dirname } from 'node:path';
import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type Rate } from '@hs/compiler';
import { ErrorCode, MemoryKind, OK_VOID, type Result, type StagingFile, createStagingFile, err, fileSystemError, removeStaleStaging } from '@hs/streams';
import { DType } from '@hs/tensor';
import { FusionResult } from '../tensor-layouts.js';
import { readInto } from './fusion.js';

/** Options of `FusionRecorder`. */
export interface FusionRecorderOptions {
  /** The JSON-lines file to write (replaced when the run stops); its directory must exist when the run starts. */
  readonly path: string;
  /** The recorder's clock rate, slower than the results arrive: `Rate.hz(10)`. */
  readonly rate: Rate;
  /** Results each tick takes at most (its window); equal to its edge's queue depth. */
  readonly entries: number;
}

/** Bytes of lines queued for writing before a tick waits for them (a file stream's default high-water mark). */
const WRITE_BEHIND_BYTES = 16 * 1024;

/**
 * A slow recorder on a branch: on a clock trigger at `rate` it takes the fusion results queued since its
 * last tick (a window of up to `entries`) and appends one JSON line per result to `path`:
 * `{"frame":6,"timeNs":100000000,"samples":17,"firstSample":84,"lastSample":100,"roll":...,"pitch":...,"yaw":...}`.
 * Its edge has a short queue with `dropOldest`, so results arriving faster than it ticks evict the
 * oldest queued ones (counted in `EdgeMetrics.dropped`) and the fusion is never held back. The lines go to
 * a staging file opened in `start()` (`createStagingFile` of @hs/streams: `<path>.<pid>.<random>.hs-staging`,
 * O_EXCL|O_NOFOLLOW, a symlinked folder refused; staging files of killed runs in that folder removed first)
 * and renamed onto `path` in `stop()`, so a symlink planted at `path` is replaced, never written through,
 * and readers see the previous file or the whole new one. Each tick's lines are queued as one write
 * behind the previous ones; a tick returns at once unless more than `WRITE_BEHIND_BYTES` wait, then it
 * waits for them (as a stream waits for `'drain'`). A failed write fails the next tick and `stop()`.
 */
export class FusionRecorder extends Operator {
  /** Window input `results`: host float64 `[8]` (`FusionResult`). */
  results!: InputPort;
  /** Results written. */
  recorded = 0;
  private staging: StagingFile | null = null;
  /** The queued writes, in order; never rejects (a failure is kept in `failure`). */
  private writes: Promise<void> = Promise.resolve();
  private queuedBytes = 0;
  private failure: unknown = null;
  private readonly result = new Float64Array(FusionResult.length);
  private readonly resultBytes = new Uint8Array(this.result.buffer);

  constructor(
    name: string,
    private readonly options: FusionRecorderOptions,
  ) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.results = spec.input('results', { memoryKind: MemoryKind.Host, dtype: DType.float64, rank: 1 });
    spec.temporalContract({ trigger: { clock: this.options.rate }, windows: [{ input: this.results, entries: this.options.entries }] });
  }

  private get label(): string {
    return `operator ${this.name}: '${this.options.path}'`;
  }

  /**
   * Removes stale staging files beside `path` and opens a staging file for it. Rejects with `removeStaleStaging`'s
   * error when the folder cannot be listed, `createStagingFile`'s when the file cannot be made (InvalidArgument for a
   * symlinked folder, `fileSystemError`'s otherwise).
   */
  override async start(): Promise<void> {
    await removeStaleStaging(dirname(this.options.path));
    this.staging = await createStagingFile(this.options.path, { label: this.label });
  }

  compute(ctx: ExecutionContext): Result<void> | Promise<void> {
    const staging = this.staging;
    if (staging === null) return err(ErrorCode.InvalidState, `${this.label} is not open (start() did not run)`);
    if (this.failure !== null) return fileSystemError('write', this.label, this.failure);
    const window = ctx.receiveWindow(this.results);
    let lines = '';
    for (let i = 0; i < window.length; i++) {
      const read = readInto(window.at(i), this.resultBytes);
      if (!read.ok) return read;
      const r = this.result;
      lines +=
        `{"frame":${r[FusionResult.frame]},"timeNs":${r[FusionResult.timeNs]},"samples":${r[FusionResult.samples]},` +
        `"firstSample":${r[FusionResult.firstSample]},"lastSample":${r[FusionResult.lastSample]},` +
        `"roll":${r[FusionResult.roll]},"pitch":${r[FusionResult.pitch]},"yaw":${r[FusionResult.yaw]}}\n`;
    }
    this.recorded += window.length;
    if (lines === '') return OK_VOID;
    this.queuedBytes += lines.length;
    this.writes = this.writes.then(async () => {
      if (this.failure === null) await staging.handle.writeFile(lines).catch((cause: unknown) => (this.failure = cause));
      this.queuedBytes -= lines.length;
    });
    if (this.queuedBytes <= WRITE_BEHIND_BYTES) return OK_VOID;
    return this.writes.then(() => {
      if (this.failure !== null) throw fileSystemError('write', this.label, this.failure).error;
    });
  }

  /**
   * Waits for the queued writes, flushes the staging file and renames it onto `path`. Rejects with the first failed
   * write's `fileSystemError` (the staging file removed) or `StagingFile.commit`'s error.
   */
  override async stop(): Promise<void> {
    const staging = this.staging;
    this.staging = null;
    if (staging === null) return;
    await this.writes;
    if (this.failure !== null) {
      await staging.discard();
      throw fileSystemError('write', this.label, this.failure).error;
    }
    await staging.commit();
  }
}
