import { dirname, join } from 'node:path';
import { PREBUILT_FLOORS, PREBUILT_PLATFORMS, loadAddon, prebuiltPackage, prebuiltPlatform } from '@hs/native-addon';
import { type Backend, type CudaDeviceProperties, type CudaReport, Device, MemoryKind, cudaReport, selectBackend } from '@hs/streams';
import { findInAncestors } from './checkout-search.js';

/** `ok`: works; `missing`: absent, hs works without it; `failed`: present but broken. */
export type DoctorStatus = 'ok' | 'missing' | 'failed';

/** One line of the `hs doctor` report. */
export interface DoctorCheck {
  /** What was checked, e.g. `host backend`, `CUDA devices`. */
  readonly name: string;
  readonly status: DoctorStatus;
  /** What was found. */
  readonly detail: string;
  /** What to do about a `missing` or `failed` check; `undefined` for `ok`. */
  readonly todo?: string;
}

/** The whole `hs doctor` report. */
export interface DoctorReport {
  /** The backend `selectBackend()` picks here (`host` or `cuda`), or `undefined` when it fails. */
  readonly backend: string | undefined;
  /** Whether the host backend passed its round trip: the condition for exit code 0. */
  readonly hostBackendWorks: boolean;
  readonly checks: readonly DoctorCheck[];
}

const ROUND_TRIP_BYTES = 4096;
const ROUND_TRIP_VALUE = 0x5a;
/** `cudaMemAllocationHandleType` bits. */
const HANDLE_TYPES: readonly (readonly [number, string])[] = [
  [1, 'POSIX file descriptor'],
  [2, 'Win32 handle'],
  [4, 'Win32 KMT handle'],
  [8, 'fabric'],
];

/**
 * Runs every check of `hs doctor`: Node, the backend `selectBackend()` picks (honouring `HS_BACKEND` in
 * `env`), a host-backend round trip (stream, allocation, fill, copy back, compare), whether this platform has
 * prebuilt addons and what they need (glibc, NVIDIA driver), the CUDA addon and its
 * runtime and driver versions, each device with its memory-pool and IPC support, a CUDA-backend round
 * trip when a device is visible, and the `@hs/ipc` package with its native addon (looked up from `cwd`).
 * Never throws for a missing piece: each becomes a check with what to do.
 */
export async function runDoctorChecks(env: Readonly<Record<string, string | undefined>>, cwd: string): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [{ name: 'node', status: 'ok', detail: `${process.version} on ${process.platform} ${process.arch}` }];

  const selected = selectBackend({ env });
  const source = env['HS_BACKEND'] !== undefined && env['HS_BACKEND'] !== '' ? `HS_BACKEND=${env['HS_BACKEND']}` : 'auto-detection';
  let backend: string | undefined;
  if (selected.ok) {
    backend = selected.value.name;
    selected.value.dispose();
    checks.push({ name: 'backend', status: 'ok', detail: `${backend} (chosen by ${source})` });
  } else {
    checks.push({
      name: 'backend',
      status: 'failed',
      detail: selected.error.message,
      todo: 'unset HS_BACKEND (auto-detection) or set HS_BACKEND=host to run on the host backend',
    });
  }

  const host = await roundTrip('host', Device.cuda(0));
  checks.push(host);

  checks.push(prebuiltCheck());
  const cuda = cudaReport();
  checks.push(...cudaChecks(cuda));
  if (cuda.addon === 'loaded' && cuda.devices.length > 0) checks.push(await roundTrip('cuda', Device.cuda(0)));

  checks.push(await ipcPackageCheck(cwd));
  return { backend, hostBackendWorks: host.status === 'ok', checks };
}

/** Creates a stream, allocates device memory, fills it, copies it back and compares, on one backend. */
async function roundTrip(name: 'host' | 'cuda', device: Device): Promise<DoctorCheck> {
  const check = `${name} backend`;
  const selected = selectBackend({ backend: name });
  if (!selected.ok) {
    return { name: check, status: 'failed', detail: selected.error.message, todo: name === 'host' ? REINSTALL : CUDA_REBUILD };
  }
  const backend = selected.value;
  try {
    const problem = await fillAndReadBack(backend, device);
    if (problem !== undefined) return { name: check, status: 'failed', detail: problem, todo: name === 'host' ? REINSTALL : CUDA_REBUILD };
    return {
      name: check,
      status: 'ok',
      detail: `stream, ${ROUND_TRIP_BYTES}-byte ${MemoryKind.CudaDevice} allocation on ${device.toString()}, fill and copy back verified`,
    };
  } finally {
    backend.dispose();
  }
}

async function fillAndReadBack(backend: Backend, device: Device): Promise<string | undefined> {
  const stream = backend.createStream(device, { label: 'hs-doctor' });
  if (!stream.ok) return stream.error.message;
  const memory = backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: ROUND_TRIP_BYTES, label: 'hs-doctor' });
  if (!memory.ok) {
    backend.destroyStream(stream.value);
    return memory.error.message;
  }
  try {
    const range = { memory: memory.value, byteOffset: 0, byteLength: ROUND_TRIP_BYTES, label: 'hs-doctor' };
    const back = new Uint8Array(ROUND_TRIP_BYTES);
    const filled = backend.memsetAsync(stream.value, range, ROUND_TRIP_VALUE);
    if (!filled.ok) return filled.error.message;
    const copied = backend.copyToHostAsync(stream.value, back, range);
    if (!copied.ok) return copied.error.message;
    try {
      await backend.synchronizeStream(stream.value);
    } catch (error) {
      return (error as Error).message;
    }
    const wrong = back.findIndex((b) => b !== ROUND_TRIP_VALUE);
    return wrong < 0 ? undefined : `byte ${wrong} read back as ${back[wrong]}, expected ${ROUND_TRIP_VALUE}`;
  } finally {
    backend.free(memory.value);
    backend.destroyStream(stream.value);
  }
}

const REINSTALL = 'reinstall hs (npm install); the host backend is pure TypeScript and should always work: report this as a bug';
const CUDA_REBUILD = `check the driver with nvidia-smi (the prebuilt addon needs ${PREBUILT_FLOORS.nvidiaDriver} or newer), or build the addon for this machine (npx hs-build-addon cuda); HS_BACKEND=host runs everything without CUDA`;

/**
 * Whether this platform has hs's prebuilt addons, and what they need of the machine: glibc and the NVIDIA
 * driver (`PREBUILT_FLOORS` of `@hs/native-addon`, read from the binaries by the packaging test).
 */
export function prebuiltCheck(): DoctorCheck {
  const name = 'prebuilt addons';
  const platform = prebuiltPlatform();
  const floors = `needs glibc ${PREBUILT_FLOORS.glibc} or newer and, for CUDA, an NVIDIA driver ${PREBUILT_FLOORS.nvidiaDriver} or newer (CUDA ${PREBUILT_FLOORS.cuda})`;
  if (PREBUILT_PLATFORMS.includes(platform)) return { name, status: 'ok', detail: `${prebuiltPackage()} for ${platform}: ${floors}` };
  return {
    name,
    status: 'missing',
    detail: `hs publishes no prebuilt addon for ${platform} yet (only for ${PREBUILT_PLATFORMS.join(', ')})`,
    todo: 'build the addons from source in your project: install the CUDA toolkit (nvcc), cmake and a C++ compiler, then run npx hs-build-addon',
  };
}

/**
 * The CUDA part of the report from `cudaReport()` of `@hs/streams`: the addon, runtime and driver
 * versions, then per device its name and capability, memory-pool support and IPC support (event sharing
 * and pool handle types), or why there is no device.
 */
export function cudaChecks(cuda: CudaReport): DoctorCheck[] {
  if (cuda.addon === 'unavailable') {
    return [{ name: 'CUDA addon', status: 'missing', detail: 'not loaded, so no CUDA backend', todo: cuda.reason }];
  }
  const checks: DoctorCheck[] = [
    { name: 'CUDA addon', status: 'ok', detail: `loaded from ${cuda.path}` },
    { name: 'CUDA runtime', status: 'ok', detail: cudaVersion(cuda.runtimeVersion) },
  ];
  if (cuda.driverVersion === 0) {
    checks.push({
      name: 'CUDA driver',
      status: 'missing',
      detail: `none (${cuda.statusText})`,
      todo: `install an NVIDIA driver that supports CUDA ${cudaVersion(cuda.runtimeVersion)} or newer; until then hs runs on the host backend`,
    });
  } else {
    checks.push({ name: 'CUDA driver', status: 'ok', detail: `supports CUDA ${cudaVersion(cuda.driverVersion)}` });
  }
  if (cuda.devices.length === 0) {
    checks.push({ name: 'CUDA devices', status: 'missing', detail: `no device: ${cuda.statusText}`, todo: 'run on a machine with an NVIDIA GPU (check with nvidia-smi); the host backend emulates cuda:N in host memory meanwhile' });
    checks.push({
      name: 'memory pools and CUDA IPC',
      status: 'missing',
      detail: 'not checkable without a CUDA device; hs tensor pools and in-process flows work on the host backend',
      todo: 'on a machine with a GPU, hs doctor lists stream-ordered allocation and IPC event/handle support per device',
    });
    return checks;
  }
  for (const properties of cuda.devices) {
    if ('error' in properties) {
      checks.push({ name: `cuda:${properties.ordinal}`, status: 'failed', detail: `device properties unreadable (${properties.error})`, todo: 'check the device with nvidia-smi; reset it or reboot if it reports an error' });
      continue;
    }
    checks.push({ name: `cuda:${properties.ordinal}`, status: 'ok', detail: `${properties.name}, compute capability ${properties.computeCapability}, ${(properties.totalGlobalMem / 2 ** 30).toFixed(1)} GiB, ${properties.multiProcessorCount} SMs` });
    checks.push(memoryPoolCheck(properties));
    checks.push(ipcDeviceCheck(properties));
  }
  return checks;
}

function memoryPoolCheck(properties: CudaDeviceProperties): DoctorCheck {
  const name = `cuda:${properties.ordinal} memory pools`;
  if (properties.memoryPoolsSupported) return { name, status: 'ok', detail: 'stream-ordered allocation (cudaMallocAsync) supported' };
  return { name, status: 'missing', detail: 'the device or driver does not support memory pools', todo: 'update the driver; hs pools still work, but cudaMallocAsync-based resources are unavailable' };
}

function ipcDeviceCheck(properties: CudaDeviceProperties): DoctorCheck {
  const name = `cuda:${properties.ordinal} IPC`;
  const handles = HANDLE_TYPES.filter(([bit]) => (properties.memoryPoolSupportedHandleTypes & bit) !== 0).map(([, label]) => label);
  const detail = `events ${properties.ipcEventSupported ? 'shareable' : 'not shareable'}; pool handle types: ${handles.length === 0 ? 'none' : handles.join(', ')}`;
  if (properties.ipcEventSupported) return { name, status: 'ok', detail };
  return { name, status: 'missing', detail, todo: 'cross-process topics need IPC events: use a Linux driver with IPC support, or keep the pipeline in one process' };
}

/** Finds `@hs/ipc` from `cwd` (installed in a node_modules, or in an hs checkout) and loads its native addon. */
async function ipcPackageCheck(cwd: string): Promise<DoctorCheck> {
  const name = '@hs/ipc';
  // Node's own lookup (node_modules of cwd and its parents) without NODE_PATH, then an hs checkout.
  const manifest =
    (await findInAncestors(cwd, join('node_modules', '@hs', 'ipc', 'package.json'))) ??
    (await findInAncestors(cwd, join('packages', 'ipc', 'package.json')));
  if (manifest === undefined) {
    return { name, status: 'missing', detail: 'not installed here', todo: 'for cross-process topics add @hs/ipc to your project (pnpm add @hs/ipc)' };
  }
  const dir = dirname(manifest);
  const buildCommand = 'npx hs-build-addon ipc';
  const native = loadAddon<IpcAddonExports>({
    name: '@hs/ipc addon',
    packageRoot: dir,
    file: join('build', 'hs_ipc.node'),
    prebuilt: 'hs_ipc.node',
    buildCommand,
    buildRequires: 'cmake and a C++ compiler',
  });
  if (!native.ok) {
    return native.cause !== undefined
      ? { name, status: 'failed', detail: `found at ${dir}: ${native.reason}`, todo: `rebuild it: ${buildCommand}` }
      : { name, status: 'missing', detail: `found at ${dir}: ${native.reason}`, todo: `install cmake and a C++ compiler, then: ${buildCommand}` };
  }
  return ipcAddonCheck(native.path, native.addon);
}

/** What `hs doctor` reads of a loaded `hs_ipc.node`: its ABI and whether the functions `@hs/ipc` needs exist. */
export interface IpcAddonExports {
  readonly abiVersion?: unknown;
  readonly createSealedSegment?: unknown;
  readonly openSealedSegment?: unknown;
  readonly sendWithDescriptors?: unknown;
  readonly connectAndReceive?: unknown;
  readonly watchDoorbell?: unknown;
  readonly createDoorbellPipe?: unknown;
}

/** The addon ABI that brought wire version 2's sealed segments passed with HELLO (host topics need it). */
const WIRE_V2_ABI = 5;
/** The addon ABI that brought anonymous doorbell pipes (topic mailboxes need it). */
const DOORBELL_PIPE_ABI = 6;

/**
 * The `@hs/ipc` check of a loaded addon (`addon`: its path), deciding as `@hs/ipc` itself does: host topics
 * (wire version 2) need the sealed-segment and descriptor-passing functions of ABI 5 (`SharedSegment.createSealed`,
 * `receiveHello`), else every topic fails with `NotSupported`: `failed`, with the rebuild command; topic mailboxes
 * need `watchDoorbell` and `createDoorbellPipe`, the anonymous doorbell pipes of ABI 6 (`mailboxSupport()`):
 * without them topics carry descriptors over the socket, and the check stays `ok` saying why and how to rebuild.
 */
export function ipcAddonCheck(addon: string, exports: IpcAddonExports): DoctorCheck {
  const name = '@hs/ipc';
  const buildCommand = 'npx hs-build-addon ipc';
  const abi = typeof exports.abiVersion === 'number' ? exports.abiVersion : null;
  const abiText = abi === null ? 'no ABI version' : `ABI ${abi}`;
  const wireV2 = [exports.createSealedSegment, exports.openSealedSegment, exports.sendWithDescriptors, exports.connectAndReceive].every((f) => typeof f === 'function');
  if (!wireV2) {
    return {
      name,
      status: 'failed',
      detail: `native addon loaded from ${addon} (${abiText}) is older than wire version 2 needs (ABI ${WIRE_V2_ABI}: sealed segments passed with HELLO); every topic fails with NotSupported`,
      todo: `rebuild it: ${buildCommand}`,
    };
  }
  let mailboxes: string;
  if (typeof exports.watchDoorbell === 'function' && typeof exports.createDoorbellPipe === 'function') mailboxes = 'topic mailboxes available';
  else if (typeof exports.watchDoorbell === 'function') {
    // An ABI 5 addon watches named FIFO doorbells, which wire version 2 no longer uses.
    mailboxes = `topic mailboxes unavailable (${abiText} has named doorbell FIFOs; mailboxes need the doorbell pipes of ABI ${DOORBELL_PIPE_ABI}; descriptors go over the socket; rebuild: ${buildCommand})`;
  } else {
    // Without doorbells host topics still work, with descriptors over the socket instead of the mailbox rings.
    mailboxes = `topic mailboxes unavailable (built without libuv's uv.h next to Node; descriptors go over the socket; rebuild with Node's headers installed: ${buildCommand})`;
  }
  return { name, status: 'ok', detail: `native addon loaded from ${addon} (${abiText}); ${mailboxes}` };
}

/** `13000` -> `13.0`, `12040` -> `12.4`. */
function cudaVersion(encoded: number): string {
  return `${Math.floor(encoded / 1000)}.${Math.floor((encoded % 1000) / 10)}`;
}
