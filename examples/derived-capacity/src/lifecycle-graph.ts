import {
  type ExecutionContext,
  Graph,
  type InputPort,
  Operator,
  type OperatorSpec,
  type OutputPort,
  Rate,
  enumParam,
  memoryKindCase,
  parameterContiguousByteSpan,
  parameterMemoryKind,
  paramSchema,
  rateParam,
  shapeParam,
} from '@hs/compiler';
import { MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';

/**
 * The camera's deployment parameters: the frame shape (height, width, channels; recompile to change),
 * where frames live (recompile to change) and the frame rate (changeable while running, 1..120 Hz).
 */
export const CameraParams = paramSchema('com.hs.examples.DerivedCapacity.Camera', 1, {
  frameShape: shapeParam({ rank: 3, maxExtent: 8192 }).recompileRequired(),
  storage: enumParam(['host', 'pinned']).recompileRequired(),
  frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime(),
});

/** Generation-zero values: 1024 x 1536 x 4 bytes = 6 MiB per frame, pinned host memory, 60 Hz. */
export const CAMERA_VALUES = { frameShape: [1024, 1536, 4], storage: 'pinned', frameRate: Rate.hz(60) } as const;

/**
 * A camera whose slot bytes, memory kind and rate all come from its parameters. It fills a few frames
 * on the host (a host writer) and finishes.
 */
export class Camera extends Operator {
  frames!: OutputPort;
  private sent = 0;

  constructor(private readonly count: number) {
    super('camera');
  }

  setup(spec: OperatorSpec): void {
    const params = spec.params(CameraParams, { ...CAMERA_VALUES, frameShape: [...CAMERA_VALUES.frameShape] });
    this.frames = spec
      .output('frames')
      .producesTensor(
        { representation: { dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' },
        {
          byteSpan: parameterContiguousByteSpan(params.ref('frameShape')),
          memoryKind: parameterMemoryKind(params.ref('storage'), [
            memoryKindCase('host', MemoryKind.Host),
            memoryKindCase('pinned', MemoryKind.PinnedHost),
          ]),
        },
      )
      .nominalRate(params.ref('frameRate'));
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: CAMERA_VALUES.frameShape, dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const bytes = guard.value.tensor.mutableHostView();
    if (!bytes.ok) return bytes;
    bytes.value[0] = this.sent & 0xff;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}

/** Frames the recorder keeps alive at once, including the one in hand. */
export const RETAINED_HISTORY = 4;

/**
 * A 15 Hz clock-triggered recorder that keeps the last four frames alive (its retained history): at each
 * tick it takes the frames queued since the last one (a window of up to four) and holds a read lease on
 * the three frames before the newest, so the pool reserves four entries for it (`retainHistory(4)`).
 */
export class Recorder extends Operator {
  frames!: InputPort;
  received = 0;
  private readonly history: Tensor[] = [];

  constructor() {
    super('recorder');
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 }).retainHistory(RETAINED_HISTORY);
    spec.temporalContract({ trigger: { clock: Rate.hz(15) }, windows: [{ input: this.frames, entries: RETAINED_HISTORY }] });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const frames = ctx.receiveWindow(this.frames);
    for (let i = 0; i < frames.length; i++) {
      const frame = frames.at(i);
      if (frame.backing === null) continue;
      this.received += 1;
      const leased = frame.backing.acquireLease();
      if (!leased.ok) return leased;
      this.history.push(frame);
      if (this.history.length === RETAINED_HISTORY) this.history.shift()?.backing?.releaseLease(null);
    }
    return OK_VOID;
  }

  override stop(): Result<void> {
    for (const frame of this.history.splice(0)) frame.backing?.releaseLease(null);
    return OK_VOID;
  }
}

/** The lifecycle graph: camera.frames -> recorder.frames with an automatic queue depth. */
export function buildLifecycleGraph(frames: number): { graph: Graph; camera: Camera; recorder: Recorder } {
  const graph = new Graph('derived-capacity');
  const camera = graph.add(new Camera(frames));
  const recorder = graph.add(new Recorder());
  graph.addFlow(camera.frames, recorder.frames);
  return { graph, camera, recorder };
}
