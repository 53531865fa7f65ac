/**
 * Where a tensor's bytes live. Spec: "Derive memory kind from deployment parameters"; the four kinds of
 * `MemoryKind` in holoscan-5.0-tensors-in-depth.
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

/** All memory kinds in declaration order. */
export const MEMORY_KINDS: readonly MemoryKind[] = Object.freeze([
  MemoryKind.Host,
  MemoryKind.PinnedHost,
  MemoryKind.CudaDevice,
  MemoryKind.CudaManaged,
]);

/** True when the host may read and write the memory directly (host, pinnedHost, cudaManaged). */
export function isHostAccessible(kind: MemoryKind): boolean {
  return kind !== MemoryKind.CudaDevice;
}

/** True when device work may access the memory (pinnedHost, cudaDevice, cudaManaged). */
export function isDeviceAccessible(kind: MemoryKind): boolean {
  return kind !== MemoryKind.Host;
}

/** True when the memory kind belongs to a CUDA device and so needs an explicit device binding. */
export function requiresCudaDevice(kind: MemoryKind): boolean {
  return kind === MemoryKind.CudaDevice || kind === MemoryKind.CudaManaged;
}

/** Parses a memory kind name; returns `undefined` for unknown names. */
export function parseMemoryKind(name: string): MemoryKind | undefined {
  return MEMORY_KINDS.find((k) => k === name);
}
