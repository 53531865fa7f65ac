import { Device, ErrorCode, MemoryKind, err, ok, requiresCudaDevice, type Backend, type Result } from '@hs/streams';
import type { BackendResource } from './resources/backend-resource.js';
import { DeviceResource } from './resources/device-resource.js';
import { HostResource } from './resources/host-resource.js';
import { ManagedResource } from './resources/managed-resource.js';
import { PinnedResource } from './resources/pinned-resource.js';

const defaults = new WeakMap<Backend, Map<string, BackendResource>>();

/**
 * The default resource of a memory kind on a device of `backend`, the same object on every call for the
 * same backend, kind and device (stable identity, so it can be compared and shared):
 * host -> `HostResource`, pinnedHost -> `PinnedResource`, cudaDevice -> `DeviceResource` (stream-ordered;
 * on a pool-less device its allocations fail with an actionable NotSupported, never a silent fallback),
 * cudaManaged -> `ManagedResource`.
 *
 * hs has no process-global device runtime, so the backend is explicit. Errors: InvalidArgument for a
 * `backend` that is not a Backend, an unknown kind, a host kind with a CUDA device or a CUDA kind with `Device.cpu()` or a device the backend
 * does not have. Spec: "default_resource<R>()" (nanovdb-memory-resources, Step 1).
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { defaultResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const device = unwrap(defaultResource(backend, MemoryKind.CudaDevice, Device.cuda(0)));
 * const again = unwrap(defaultResource(backend, MemoryKind.CudaDevice, Device.cuda(0)));
 * console.log(`${device.label} for cudaDevice memory, the same object each time: ${device === again}`);
 * const wrong = defaultResource(backend, MemoryKind.Host, Device.cuda(0));
 * if (!wrong.ok) console.log(wrong.error.message); // host memory belongs to Device.cpu()
 * ```
 */
export function defaultResource(backend: Backend, kind: MemoryKind, device: Device): Result<BackendResource> {
  if (typeof backend !== 'object' || backend === null || typeof backend.allocate !== 'function') {
    return err(ErrorCode.InvalidArgument, `defaultResource: expected a Backend (for example new HostBackend()), got ${backend === null ? 'null' : typeof backend}`);
  }
  if (!(device instanceof Device)) return err(ErrorCode.InvalidArgument, `defaultResource: device must be a Device, got ${String(device)}`);
  if (!Object.values(MemoryKind).includes(kind)) return err(ErrorCode.InvalidArgument, `defaultResource: unknown memory kind "${String(kind)}"`);
  if (requiresCudaDevice(kind)) {
    if (!backend.devices.includes(device)) {
      return err(ErrorCode.InvalidArgument, `defaultResource: ${kind} memory needs a CUDA device of the backend (${backend.devices.map(String).join(', ') || 'none'}), got ${device.toString()}`);
    }
  } else if (device !== Device.cpu()) {
    return err(ErrorCode.InvalidArgument, `defaultResource: ${kind} memory belongs to Device.cpu(), got ${device.toString()}`);
  }
  let byKey = defaults.get(backend);
  if (byKey === undefined) {
    byKey = new Map();
    defaults.set(backend, byKey);
  }
  const key = `${kind}@${device.toString()}`;
  let resource = byKey.get(key);
  if (resource === undefined) {
    resource = makeDefault(backend, kind, device);
    byKey.set(key, resource);
  }
  return ok(resource);
}

function makeDefault(backend: Backend, kind: MemoryKind, device: Device): BackendResource {
  switch (kind) {
    case MemoryKind.Host:
      return new HostResource(backend);
    case MemoryKind.PinnedHost:
      return new PinnedResource(backend);
    case MemoryKind.CudaDevice:
      return new DeviceResource(backend, device);
    case MemoryKind.CudaManaged:
      return new ManagedResource(backend, device);
  }
}
