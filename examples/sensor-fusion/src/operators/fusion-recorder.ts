import { once } from 'node:events';
import { type WriteStream, createWriteStream } from 'node:fs';
import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type Rate } from '@hs/compiler';
import { type Err, ErrorCode, MemoryKind, OK_VOID, type Result, err, fileSystemError } from '@hs/streams';
import { DType } from '@hs/tensor';
import { FusionResult } from '../tensor-layouts.js';
import { readInto } from './fusion.js';

/** Options of `FusionRecorder`. */
export interface FusionRecorderOptions {
  /** The JSON-lines file to write (replaced when it exists); its directory must exist when the run starts. */
  readonly path: string;
  /** The recorder's clock rate, slower than the results arrive: `Rate.hz(10)`. */
  readonly rate: Rate;
  /** Results each tick takes at most (its window); equal to its edge's queue depth. */
  readonly entries: number;
}

/**
 * A slow recorder on a branch: on a clock trigger at `rate` it takes the fusion results queued since its
 * last tick (a window of up to `entries`) and appends one JSON line per result to `path`:
 * `{"frame":6,"timeNs":100000000,"samples":17,"firstSample":84,"lastSample":100,"roll":...,"pitch":...,"yaw":...}`.
 * Its edge has a short queue with `dropOldest`, so results arriving faster than it ticks evict the
 * oldest queued ones (counted in `EdgeMetrics.dropped`) and the fusion is never held back. The file is
 * opened in `start()` and ended in `stop()`; a write the stream cannot buffer waits for its `'drain'`.
 */
export class FusionRecorder extends Operator {
  /** Window input `results`: host float64 `[8]` (`FusionResult`). */
  results!: InputPort;
  /** Results written. */
  recorded = 0;
  private stream: WriteStream | null = null;
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

  /** Opens `path` for writing. Rejects with `fileSystemError`'s typed error when it cannot. */
  override async start(): Promise<void> {
    const stream = createWriteStream(this.options.path);
    stream.on('error', (error: unknown) => (this.failure ??= error));
    try {
      await once(stream, 'open');
    } catch (cause) {
      throw fileSystemError('create', `operator ${this.name}: '${this.options.path}'`, cause).error;
    }
    this.stream = stream;
  }

  compute(ctx: ExecutionContext): Result<void> | Promise<void> {
    const stream = this.stream;
    if (stream === null || this.failure !== null) return this.failed();
    const window = ctx.receiveWindow(this.results);
    let room = true;
    for (let i = 0; i < window.length; i++) {
      const read = readInto(window.at(i), this.resultBytes);
      if (!read.ok) return read;
      const r = this.result;
      room = stream.write(
        `{"frame":${r[FusionResult.frame]},"timeNs":${r[FusionResult.timeNs]},"samples":${r[FusionResult.samples]},` +
          `"firstSample":${r[FusionResult.firstSample]},"lastSample":${r[FusionResult.lastSample]},` +
          `"roll":${r[FusionResult.roll]},"pitch":${r[FusionResult.pitch]},"yaw":${r[FusionResult.yaw]}}\n`,
      );
      this.recorded += 1;
    }
    if (room) return OK_VOID;
    return once(stream, 'drain').then(
      () => undefined,
      (cause: unknown) => {
        throw fileSystemError('write', `operator ${this.name}: '${this.options.path}'`, cause).error;
      },
    );
  }

  /** Ends the file and waits until every line is written. */
  override async stop(): Promise<void> {
    const stream = this.stream;
    this.stream = null;
    if (stream === null) return;
    stream.end();
    try {
      await once(stream, 'finish');
    } catch (cause) {
      throw fileSystemError('write', `operator ${this.name}: '${this.options.path}'`, cause).error;
    }
    if (this.failure !== null) throw this.failed().error;
  }

  private failed(): Err {
    if (this.failure === null) return err(ErrorCode.InvalidState, `operator ${this.name}: '${this.options.path}' is not open (start() did not run)`);
    return fileSystemError('write', `operator ${this.name}: '${this.options.path}'`, this.failure);
  }
}
