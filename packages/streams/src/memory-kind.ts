/**
 * Where a tensor's bytes live. Spec: "Derive memory kind from deployment parameters"; the four kinds of
 * `MemoryKind` in holoscan-5.0-tensors-in-depth.
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const upload = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 4096, label: 'upload staging' }));
 * const frame = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 4096, label: 'frame' }));
 * console.log(`${upload.label}: ${upload.kind}, ${frame.label}: ${frame.kind} on ${frame.device}`);
 * backend.dispose();
 * ```
 */
export enum MemoryKind {
  /** Pageable host memory. */
  Host = 'host',
  /** Page-locked host memory, readable by the host and usable for fast device copies. */
  PinnedHost = 'pinnedHost',
  /** Device-only memory; the host reaches it only through copies. */
  CudaDevice = 'cudaDevice',
  /** Unified (managed) memory; never crosses a process boundary. */
  CudaManaged = 'cudaManaged',
}

/**
 * All memory kinds in declaration order.
 * @example
 * ```ts
 * import { MEMORY_KINDS, isDeviceAccessible, isHostAccessible } from '@hs/streams';
 *
 * for (const kind of MEMORY_KINDS) console.log(`${kind}: host ${isHostAccessible(kind)}, device ${isDeviceAccessible(kind)}`);
 * ```
 */
export const MEMORY_KINDS: readonly MemoryKind[] = Object.freeze([
  MemoryKind.Host,
  MemoryKind.PinnedHost,
  MemoryKind.CudaDevice,
  MemoryKind.CudaManaged,
]);

/**
 * True when the host may read and write the memory directly (host, pinnedHost, cudaManaged).
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, isHostAccessible, requiresCudaDevice, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * for (const kind of [MemoryKind.PinnedHost, MemoryKind.CudaDevice]) {
 *   const memory = unwrap(backend.allocate({ kind, device: requiresCudaDevice(kind) ? Device.cuda(0) : Device.cpu(), byteSize: 256 }));
 *   // Only host-accessible memory has a host view; cudaDevice memory is reached through copies.
 *   const view = backend.hostView(memory);
 *   console.log(`${kind}: isHostAccessible ${isHostAccessible(kind)}, hostView ${view.ok ? 'ok' : view.error.code}`);
 * }
 * backend.dispose();
 * ```
 */
export function isHostAccessible(kind: MemoryKind): boolean {
  return kind !== MemoryKind.CudaDevice;
}

/**
 * True when device work may access the memory (pinnedHost, cudaDevice, cudaManaged).
 * @example
 * ```ts
 * import { MemoryKind, isDeviceAccessible, parseMemoryKind } from '@hs/streams';
 *
 * // A kernel reads its input from device-accessible memory; pageable host bytes are staged through pinnedHost first.
 * const input = parseMemoryKind('host') ?? MemoryKind.Host;
 * const kernelInput = isDeviceAccessible(input) ? input : MemoryKind.PinnedHost;
 * console.log(`input in ${input}: the kernel reads a copy in ${kernelInput}`);
 * ```
 */
export function isDeviceAccessible(kind: MemoryKind): boolean {
  return kind !== MemoryKind.Host;
}

/**
 * True when the memory kind belongs to a CUDA device and so needs an explicit device binding.
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, requiresCudaDevice, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * for (const kind of [MemoryKind.Host, MemoryKind.CudaManaged]) {
 *   // CUDA kinds need an explicit device binding; host kinds live on the CPU.
 *   const device = requiresCudaDevice(kind) ? Device.cuda(0) : Device.cpu();
 *   const memory = unwrap(backend.allocate({ kind, device, byteSize: 1024 }));
 *   console.log(`${kind} on ${memory.device}`);
 * }
 * backend.dispose();
 * ```
 */
export function requiresCudaDevice(kind: MemoryKind): boolean {
  return kind === MemoryKind.CudaDevice || kind === MemoryKind.CudaManaged;
}

/**
 * Parses a memory kind name; returns `undefined` for unknown names.
 * @example
 * ```ts
 * import { MEMORY_KINDS, parseMemoryKind } from '@hs/streams';
 *
 * const flag = 'cudaDevice'; // for example the value of an --output-memory option
 * const kind = parseMemoryKind(flag);
 * if (kind === undefined) throw new Error(`unknown memory kind '${flag}'; use one of ${MEMORY_KINDS.join(', ')}`);
 * console.log(`outputs go to ${kind} memory; 'gpu' parses as ${parseMemoryKind('gpu')}`);
 * ```
 */
export function parseMemoryKind(name: string): MemoryKind | undefined {
  return MEMORY_KINDS.find((k) => k === name);
}
