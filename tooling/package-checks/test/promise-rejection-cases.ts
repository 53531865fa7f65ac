import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { runHs, type CliIo } from '@hs/cli';
import { type ExecutionContext, type ExecutionPlan, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { ChannelRuntime, DeviceTopicPublisher, IpcBoundaries, TopicPublisher, ipcAvailability } from '@hs/ipc';
import {
  AsyncFromSync,
  BoundedPointsToGrid,
  BufferView,
  DeviceResource,
  GridType,
  HostResource,
  decodeNvdbAsync,
  distributedPointsToGrid,
  gridFromTensorAsync,
  pointsToGridAsync,
  streamGridHandleAsync,
  readNvdbAsync,
  readNvdbFile,
  voxelsToGrid,
  writeNvdbAsync,
  writeNvdbFile,
} from '@hs/nanovdb-mr';
import { makeHostHarness } from '@hs/pool/test';
import {
  type BoundaryPublication,
  DeviceCopy,
  RunSession,
  SubmissionPacer,
  WritableSink,
  createOutputDirectory,
} from '@hs/runtime';
import {
  type Backend,
  CudaBackend,
  Device,
  ErrorCode,
  HostBackend,
  type HostBackendOptions,
  HsError,
  MemoryKind,
  type Result,
  checkOutputFolder,
  createStagingFile,
  err,
  ok,
  openExclusive,
  openRegularFile,
  readRegularFile,
  removeStaleStaging,
  unwrap,
  writeFileAtomic,
} from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';

/**
 * How one public promise-returning export (named as `promiseExports` names it) behaves on a failing
 * input. `run` sets the input up, calls the export and passes its settlement on (cleaning up either way).
 * - `rejects`: the promise must reject with an `HsError` of this code (and `message`, when given, in its message).
 * - `resolves`: the export never rejects, for the reason given; `run` gives it the failing input anyway
 *   and the promise must still resolve.
 * - `contract`: a member the user implements (a pipeline module); `run` implements it to reject with an
 *   `HsError` and drives hs's caller of it, resolving when the caller passed the rejection on as the
 *   string says, and rejecting with what it saw otherwise.
 */
export type PromiseCase = { readonly skip?: string | null } & (
  | { readonly rejects: ErrorCode; readonly message?: string; readonly run: (scratch: string) => Promise<unknown> }
  | { readonly resolves: string; readonly run: (scratch: string) => Promise<unknown> }
  | { readonly contract: string; readonly run: (scratch: string) => Promise<unknown> }
);

const ipc = ipcAvailability();
const NO_IPC = ipc.available ? null : `the IPC addon is unavailable (${ipc.reason})`;
const NO_CUDA = CudaBackend.available() ? null : 'no CUDA device, or @hs/cuda-native is not built';

/** A backend that cannot adopt shared memory: what a topic refuses before it touches the system. */
const NO_SHARED_MEMORY = { name: 'no-shared-memory' } as unknown as Backend;

/** A host source that fails its first activation with `NotFound` (a failure returned on the hot path). */
class FailingSource extends Operator {
  out!: OutputPort;
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 4 }, storage: 'runtimePool' });
  }
  compute(): Result<void> {
    return err(ErrorCode.NotFound, 'planted: the camera is gone');
  }
}

/** A host sink that drops what it receives. */
class DropSink extends Operator {
  in!: InputPort;
  setup(spec: OperatorSpec): void {
    this.in = spec.input('in', { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 });
  }
  compute(ctx: ExecutionContext): void {
    ctx.receive(this.in);
  }
}

/** source -> sink, compiled; `topic` publishes the source's output as well. */
function failingPlan(topic?: string): ExecutionPlan {
  const graph = new Graph('failing');
  const source = graph.add(new FailingSource('source'));
  graph.addFlow(source.out, graph.add(new DropSink('sink')).in);
  if (topic !== undefined) graph.publish(source.out, topic);
  return unwrap(compile(graph));
}

/** A plan whose only input is subscribed to `topic`. */
function subscriberPlan(topic: string): ExecutionPlan {
  const graph = new Graph('subscriber');
  graph.subscribe(topic, graph.add(new DropSink('sink')).in);
  return unwrap(compile(graph));
}

/** A session whose run fails (its source returns NotFound at once), on its own host backend. */
function failingSession(): RunSession {
  return unwrap(RunSession.create(failingPlan(), { backend: 'host' }));
}

/** Calls `exercise` with a HostBackend and disposes the backend once the promise settled. */
async function onHost<T>(exercise: (backend: HostBackend) => Promise<T>, options: HostBackendOptions = {}): Promise<T> {
  const backend = new HostBackend(options);
  try {
    return await exercise(backend);
  } finally {
    backend.dispose();
  }
}

/** A stream and an event on a HostBackend, both destroyed: every wait on them is InvalidState. */
async function destroyedStreamAndEvent(backend: Backend, wait: 'stream' | 'event'): Promise<void> {
  const stream = unwrap(backend.createStream(Device.cuda(0)));
  const event = unwrap(backend.createEvent(Device.cuda(0)));
  backend.destroyStream(stream);
  backend.destroyEvent(event);
  return wait === 'stream' ? backend.synchronizeStream(stream) : backend.synchronizeEvent(event);
}

/** A pacer with one frame in flight whose work faulted (a host function that throws). */
function faultedPacer(backend: HostBackend): SubmissionPacer {
  const stream = unwrap(backend.createStream(Device.cuda(0)));
  const pacer = unwrap(SubmissionPacer.create(backend, Device.cuda(0), 1));
  unwrap(
    backend.launchHostFunc(stream, () => {
      throw new Error('planted device fault');
    }),
  );
  unwrap(pacer.record(stream));
  return pacer;
}

/** The publication `IpcBoundaries` lends a session for the topic of `plan` (prepared in `scratch`). */
async function ipcPublication(backend: Backend, plan: ExecutionPlan, scratch: string, subscriberTimeoutMs: number): Promise<BoundaryPublication> {
  const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: scratch, awaitSubscribers: 1, subscriberTimeoutMs });
  const record = plan.pools.find((p) => p.boundary !== null)!;
  const endpoint = plan.topics.find((t) => t.direction === 'publish')!;
  return unwrap(boundaries.publish({ plan, backend, record, endpoint, producerStream: null, wake: () => undefined }));
}

/** Collects what `runHs` prints. */
function collectingIo(cwd: string): CliIo & { readonly errors: string[] } {
  const errors: string[] = [];
  return { cwd, env: {}, out: () => undefined, err: (line: string) => errors.push(line), progress: null, onInterrupt: () => () => undefined, errors } as unknown as CliIo & { readonly errors: string[] };
}

/** A pipeline module of `test/fixtures/` (`rejecting-build.mjs`, `rejecting-prepare-run.mjs`). */
const fixtureModule = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}.mjs`, import.meta.url));

/** Runs `hs <command> <module>`; resolves when it exited 1 having printed the module's NotFound. */
async function hsFailsWithModuleError(scratch: string, command: 'plan' | 'run', module: string): Promise<void> {
  const io = collectingIo(scratch);
  const exitCode = await runHs([command, module], io);
  if (exitCode !== 1 || !io.errors.includes('hs: NotFound: input scan.ply does not exist')) {
    throw new Error(`hs ${command} exited ${exitCode} printing ${JSON.stringify(io.errors)}`);
  }
}

export const PROMISE_CASES: Readonly<Record<string, PromiseCase>> = {
  '@hs/cli:runHs': { rejects: ErrorCode.InvalidArgument, message: 'args must be an array of strings', run: (scratch) => runHs('run' as unknown as string[], collectingIo(scratch)) },

  '@hs/ipc:ChannelRuntime.connect': { rejects: ErrorCode.NotSupported, message: 'cannot adopt shared memory', run: () => ChannelRuntime.connect({ backend: NO_SHARED_MEMORY, topic: 'checks' }) },
  '@hs/ipc:ChannelRuntime#receive': {
    skip: NO_IPC,
    rejects: ErrorCode.InvalidState,
    message: 'closed the topic',
    run: (scratch) =>
      onHost(async (backend) => {
        const publisher = await TopicPublisher.create({ backend, topic: 'checks-receive', memoryKind: MemoryKind.Host, slotCount: 1, slotByteSpan: 64, maxRank: 1, runtimeDirectory: scratch });
        const channel = await ChannelRuntime.connect({ backend, topic: 'checks-receive', runtimeDirectory: scratch });
        try {
          const [lease] = await Promise.all([channel.receive(), publisher.close()]); // the receive waits, then the topic ends
          return lease;
        } finally {
          channel.close();
        }
      }),
  },
  '@hs/ipc:DeviceTopicPublisher.listen': { rejects: ErrorCode.InvalidArgument, run: () => DeviceTopicPublisher.listen({ topic: 'no/slashes' }) },
  '@hs/ipc:DeviceTopicPublisher#close': {
    skip: NO_IPC,
    resolves: 'it says goodbye and removes its socket; a second close() finds nothing left to do',
    run: async (scratch) => {
      const publisher = await DeviceTopicPublisher.listen({ topic: 'checks-device-close', runtimeDirectory: scratch });
      await publisher.close();
      return publisher.close();
    },
  },
  '@hs/ipc:IpcBoundaries.prepare': { rejects: ErrorCode.InvalidArgument, message: 'options.backend is required', run: () => IpcBoundaries.prepare(failingPlan(), {} as never) },
  '@hs/ipc:IpcBoundaries#dispose': {
    resolves: 'it closes the publishers no session took; closing never fails, and a second dispose() is a no-op',
    run: () =>
      onHost(async (backend) => {
        const boundaries = await IpcBoundaries.prepare(failingPlan(), { backend });
        await boundaries.dispose();
        return boundaries.dispose();
      }),
  },
  '@hs/ipc:TopicPublisher.create': {
    rejects: ErrorCode.NotSupported,
    message: 'cannot adopt shared memory',
    run: () => TopicPublisher.create({ backend: NO_SHARED_MEMORY, topic: 'checks', memoryKind: MemoryKind.Host, slotCount: 1, slotByteSpan: 64, maxRank: 1 }),
  },
  '@hs/ipc:TopicPublisher#close': {
    skip: NO_IPC,
    resolves: 'it says goodbye and releases the segment; a second close() finds nothing left to do',
    run: (scratch) =>
      onHost(async (backend) => {
        const publisher = await TopicPublisher.create({ backend, topic: 'checks-close', memoryKind: MemoryKind.Host, slotCount: 1, slotByteSpan: 64, maxRank: 1, runtimeDirectory: scratch });
        await publisher.close();
        return publisher.close();
      }),
  },

  '@hs/nanovdb-mr:BoundedPointsToGrid#readReport': {
    rejects: ErrorCode.InvalidState,
    run: () =>
      onHost(async (backend) => {
        const stream = unwrap(backend.createStream(Device.cuda(0)));
        const build = unwrap(BoundedPointsToGrid.create(backend, stream, new DeviceResource(backend, Device.cuda(0)), { points: 2, uppers: 1, lowers: 1, leaves: 1 }, { gridType: GridType.OnIndex }));
        build.dispose();
        return build.readReport(stream);
      }),
  },
  '@hs/nanovdb-mr:pointsToGridAsync': {
    rejects: ErrorCode.InvalidArgument,
    run: () =>
      onHost(async (backend) => {
        const stream = unwrap(backend.createStream(Device.cuda(0)));
        const syncOnly = new HostResource(backend) as unknown as AsyncFromSync<HostResource>;
        return pointsToGridAsync(backend, stream, syncOnly, { space: 'index', coords: new Int32Array(3) } as never, { gridType: GridType.OnIndex });
      }),
  },

  '@hs/nanovdb-mr:distributedPointsToGrid': {
    rejects: ErrorCode.InvalidArgument,
    message: 'one resource per stream',
    run: () =>
      onHost(async (backend) => {
        const stream = unwrap(backend.createStream(Device.cuda(0)));
        return distributedPointsToGrid(backend, { space: 'index', coords: new Int32Array(3) }, [stream, stream], [new DeviceResource(backend, Device.cuda(0))], { gridType: GridType.OnIndex });
      }),
  },

  '@hs/nanovdb-mr:gridFromTensorAsync': {
    rejects: ErrorCode.InvalidArgument,
    message: 'uint8',
    run: () =>
      onHost(async (backend) => {
        const stream = unwrap(backend.createStream(Device.cuda(0)));
        const block = unwrap(new HostResource(backend).allocate(64, 32))!;
        const floats = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [16], dtype: DType.float32 }));
        try {
          return await gridFromTensorAsync(backend, stream, floats);
        } finally {
          floats.dispose();
        }
      }),
  },
  '@hs/nanovdb-mr:streamGridHandleAsync': {
    rejects: ErrorCode.InvalidArgument,
    message: 'magic',
    run: () =>
      onHost(async (backend) => {
        const stream = unwrap(backend.createStream(Device.cuda(0)));
        const resource = new HostResource(backend);
        const block = unwrap(resource.allocate(1024, 32))!; // no grid header in it
        try {
          return await streamGridHandleAsync(backend, stream, unwrap(BufferView.of(block, 1024)));
        } finally {
          unwrap(resource.deallocate(block, 1024, 32));
        }
      }),
  },
  '@hs/nanovdb-mr:decodeNvdbAsync': {
    rejects: ErrorCode.InvalidArgument,
    message: '.nvdb segment 0',
    run: () => decodeNvdbAsync(new Uint8Array(40)),
  },
  '@hs/nanovdb-mr:readNvdbAsync': {
    rejects: ErrorCode.InvalidArgument,
    run: () => onHost(async (backend) => readNvdbAsync(backend, new HostResource(backend), 'not bytes' as unknown as Uint8Array)),
  },
  '@hs/nanovdb-mr:readNvdbFile': {
    rejects: ErrorCode.NotFound,
    message: 'missing.nvdb',
    run: (scratch) => onHost(async (backend) => readNvdbFile(backend, new HostResource(backend), join(scratch, 'missing.nvdb'))),
  },
  '@hs/nanovdb-mr:writeNvdbAsync': {
    rejects: ErrorCode.InvalidArgument,
    run: () => writeNvdbAsync([]),
  },
  '@hs/nanovdb-mr:writeNvdbFile': {
    rejects: ErrorCode.NotFound,
    message: 'no-such-folder',
    run: (scratch) =>
      onHost(async (backend) => {
        const grid = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0]), values: new Float32Array([1]) }, { gridType: GridType.Float }));
        try {
          return await writeNvdbFile(join(scratch, 'no-such-folder', 'grid.nvdb'), grid);
        } finally {
          grid.dispose();
        }
      }),
  },

  '@hs/pool/test:PoolConformanceHarness#settle': {
    resolves: 'the host harness only steps its streams (a faulted step is reported by the next wait on the backend), so there is nothing to reject with',
    run: async () => {
      const harness = makeHostHarness();
      const stream = harness.createStream('faulting');
      unwrap(
        harness.backend.launchHostFunc(stream, () => {
          throw new Error('planted device fault');
        }),
      );
      try {
        return await harness.settle();
      } finally {
        harness.dispose();
      }
    },
  },

  '@hs/runtime:BoundaryPublication#start': {
    skip: NO_IPC,
    rejects: ErrorCode.NotFound,
    message: '0 of the 1 awaited subscribers attached within 50 ms',
    run: (scratch) =>
      onHost(async (backend) => {
        const publication = await ipcPublication(backend, failingPlan('checks-start'), scratch, 50);
        try {
          return await publication.start();
        } finally {
          await publication.finish();
          publication.dispose();
        }
      }),
  },
  '@hs/runtime:BoundaryPublication#finish': {
    skip: NO_IPC,
    resolves: 'it says goodbye to the subscribers and closes the publisher; one that cannot be reached is dropped, and a second finish() finds nothing left to do',
    run: (scratch) =>
      onHost(async (backend) => {
        const publication = await ipcPublication(backend, failingPlan('checks-finish'), scratch, 50);
        await publication.finish();
        publication.dispose();
        return publication.finish();
      }),
  },
  '@hs/runtime:BoundarySubscription#start': {
    rejects: ErrorCode.NotFound,
    message: 'is not published',
    run: (scratch) =>
      onHost(async (backend) => {
        const plan = subscriberPlan('checks-nobody');
        const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: scratch, connectTimeoutMs: 50 });
        const subscription = unwrap(boundaries.subscribe({ plan, backend, endpoint: plan.topics[0]!, consumerStream: null, wake: () => undefined }));
        try {
          return await subscription.start();
        } finally {
          subscription.dispose();
        }
      }),
  },
  '@hs/runtime:createOutputDirectory': {
    rejects: ErrorCode.InvalidArgument,
    message: 'ENOTDIR',
    run: async (scratch) => {
      const file = join(scratch, 'a-file');
      writeFileSync(file, '');
      return createOutputDirectory(join(file, 'out'), '--out');
    },
  },
  '@hs/runtime:PipelineBuild#prepareRun': {
    contract: 'hs run prints the rejection and exits 1',
    run: (scratch) => hsFailsWithModuleError(scratch, 'run', fixtureModule('rejecting-prepare-run')),
  },
  '@hs/runtime:PipelineModule#build': {
    contract: 'hs plan prints the rejection and exits 1',
    run: (scratch) => hsFailsWithModuleError(scratch, 'plan', fixtureModule('rejecting-build')),
  },
  '@hs/runtime:RunSession#[Symbol.asyncDispose]': {
    resolves: 'it stops a run in progress, waits for it to end and disposes; the run\'s failure belongs to run()',
    run: async () => {
      const session = failingSession();
      const running = session.run().catch(() => undefined);
      const disposed = session[Symbol.asyncDispose]();
      await running;
      return disposed;
    },
  },
  '@hs/runtime:DeviceCopy#stop': {
    rejects: ErrorCode.DeviceError,
    message: 'planted device fault',
    run: () =>
      onHost(
        async (backend) => {
          // A copy staged between devices that cannot reach each other, then a fault on the copy's stream: stop() waits
          // for that stream before it frees the staging buffer, and the wait rejects.
          const [from, to] = backend.devices as [Device, Device];
          const stream = unwrap(backend.createStream(to, { label: 'copy' }));
          const range = (device: Device, label: string) => ({ memory: unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 64, label })), byteOffset: 0, byteLength: 64, label });
          const src = range(from, 'src');
          const dst = range(to, 'dst');
          const tensor = { byteSize: 64, shape: [64], strides: [1], device: from, dtype: DType.uint8, name: 'frame', data: () => src };
          const loan = { write: () => ok({ range: dst, commit: () => ok(undefined) }) };
          const ctx = { receive: () => tensor, backend, cudaStream: () => stream, allocateTensor: () => ok(loan), emit: () => ok(undefined), pendingLoan: () => undefined };
          const copy = new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: 64 });
          unwrap(copy.compute(ctx as unknown as ExecutionContext));
          unwrap(
            backend.launchHostFunc(stream, () => {
              throw new Error('planted device fault');
            }),
          );
          return copy.stop();
        },
        { deviceCount: 2, peerAccess: false },
      ),
  },
  '@hs/runtime:RunSession#run': { rejects: ErrorCode.NotFound, message: 'operator source: planted: the camera is gone', run: () => failingSession().run() },
  '@hs/runtime:RunSession#stop': {
    resolves: 'it resolves once the run ended; the failure rejects run() instead, so a Ctrl-C handler cannot raise an unhandled rejection',
    run: async () => {
      const session = failingSession();
      const running = session.run().catch(() => undefined);
      const stopped = session.stop();
      await running;
      session.dispose();
      return stopped;
    },
  },
  '@hs/runtime:SubmissionPacer#admit': { rejects: ErrorCode.DeviceError, run: () => onHost(async (backend) => faultedPacer(backend).admit()) },
  '@hs/runtime:SubmissionPacer#close': { rejects: ErrorCode.DeviceError, run: () => onHost(async (backend) => faultedPacer(backend).close()) },
  '@hs/runtime:WritableSink#compute': {
    rejects: ErrorCode.InvalidState,
    message: 'closed early',
    run: async () => {
      const full = new Writable({ highWaterMark: 1, write: () => undefined }); // never drains
      const frame = { hostView: () => ok(new Uint8Array(4)) };
      const waiting = new WritableSink('sink', full).compute({ receive: () => frame } as unknown as ExecutionContext);
      setImmediate(() => full.destroy());
      return waiting;
    },
  },
  '@hs/runtime:WritableSink#stop': {
    rejects: ErrorCode.InvalidState,
    message: 'closed early',
    run: async () => {
      const destroyed = new Writable({ write: (_chunk, _encoding, done) => done() });
      destroyed.destroy();
      return new WritableSink('sink', destroyed).stop();
    },
  },

  '@hs/streams:checkOutputFolder': {
    rejects: ErrorCode.InvalidArgument,
    message: 'is a symbolic link',
    run: async (scratch) => {
      symlinkSync(scratch, join(scratch, 'link'));
      return checkOutputFolder(join(scratch, 'link'));
    },
  },
  '@hs/streams:createStagingFile': { rejects: ErrorCode.NotFound, run: (scratch) => createStagingFile(join(scratch, 'missing', 'x.bin')) },
  '@hs/streams:writeFileAtomic': { rejects: ErrorCode.NotFound, run: (scratch) => writeFileAtomic(join(scratch, 'missing', 'x.bin'), 'x') },
  '@hs/streams:StagingFile#commit': {
    rejects: ErrorCode.InvalidArgument,
    message: 'EISDIR',
    run: async (scratch) => {
      mkdirSync(join(scratch, 'taken'));
      return (await createStagingFile(join(scratch, 'taken'))).commit();
    },
  },
  '@hs/streams:StagingFile#discard': {
    resolves: 'it closes and removes the staging file, best effort; a second discard() finds nothing left to do',
    run: async (scratch) => {
      const staging = await createStagingFile(join(scratch, 'x.bin'));
      await staging.discard();
      return staging.discard();
    },
  },
  '@hs/streams:openExclusive': {
    rejects: ErrorCode.AlreadyExists,
    run: async (scratch) => {
      writeFileSync(join(scratch, 'taken.lock'), '1\n');
      return openExclusive(join(scratch, 'taken.lock'));
    },
  },
  '@hs/streams:openRegularFile': { rejects: ErrorCode.InvalidArgument, message: 'a directory', run: (scratch) => openRegularFile(scratch) },
  '@hs/streams:readRegularFile': { rejects: ErrorCode.NotFound, run: (scratch) => readRegularFile(join(scratch, 'missing')) },
  '@hs/streams:removeStaleStaging': { rejects: ErrorCode.NotFound, run: (scratch) => removeStaleStaging(join(scratch, 'missing')) },
  '@hs/streams:Backend#synchronizeEvent': { rejects: ErrorCode.InvalidState, run: () => onHost((backend: Backend) => destroyedStreamAndEvent(backend, 'event')) },
  '@hs/streams:Backend#synchronizeStream': { rejects: ErrorCode.InvalidState, run: () => onHost((backend: Backend) => destroyedStreamAndEvent(backend, 'stream')) },
  '@hs/streams:HostBackend#synchronizeEvent': { rejects: ErrorCode.InvalidState, run: () => onHost((backend) => destroyedStreamAndEvent(backend, 'event')) },
  '@hs/streams:HostBackend#synchronizeStream': { rejects: ErrorCode.InvalidState, run: () => onHost((backend) => destroyedStreamAndEvent(backend, 'stream')) },
  '@hs/streams:CudaBackend#synchronizeEvent': { skip: NO_CUDA, rejects: ErrorCode.InvalidState, run: () => onCuda((backend) => destroyedStreamAndEvent(backend, 'event')) },
  '@hs/streams:CudaBackend#synchronizeStream': { skip: NO_CUDA, rejects: ErrorCode.InvalidState, run: () => onCuda((backend) => destroyedStreamAndEvent(backend, 'stream')) },

  '@hs/tensor:Tensor#copyToHost': {
    rejects: ErrorCode.InvalidArgument,
    run: () =>
      onHost(async (backend) => {
        const tensor = hostTensor(backend);
        const stream = unwrap(backend.createStream(Device.cuda(0)));
        unwrap(tensor.setReadinessStream(stream));
        return tensor.copyToHost(new Uint8Array(1), stream); // 16 bytes do not fit
      }),
  },
  '@hs/tensor:Tensor#synchronizeForHost': { rejects: ErrorCode.InvalidState, message: 'readiness', run: () => onHost(async (backend) => hostTensor(backend).synchronizeForHost()) },
};

/** An imported 16-byte host tensor without a readiness contract yet. */
function hostTensor(backend: HostBackend): Tensor {
  const memory = unwrap(backend.allocate({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 16, label: 'checks' }));
  return unwrap(Tensor.import({ backend, memory, shape: [16], dtype: DType.uint8 }));
}

/** Like `onHost`, on a CudaBackend. */
async function onCuda<T>(exercise: (backend: Backend) => Promise<T>): Promise<T> {
  const backend = unwrap(CudaBackend.create());
  try {
    return await exercise(backend);
  } finally {
    backend.dispose();
  }
}

/** A scratch folder for one case. */
export function caseScratch(root: string, id: string): string {
  const dir = join(root, id.replace(/[^a-zA-Z0-9.-]+/g, '_'));
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // a topic's runtime directory must be this user's alone
  return dir;
}
