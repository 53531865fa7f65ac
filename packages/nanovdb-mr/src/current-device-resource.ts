import { Device, ErrorCode, HsError, MemoryKind, err, ok, type Backend, type Result } from '@hs/streams';
import { defaultResource } from './default-resource.js';
import { isAsyncResource, type AsyncResource } from './resource.js';
import { resourceOrigin } from './resource-origin.js';

/** The process-wide replacements, per CUDA device; a device without one uses its default resource. */
const current = new Map<Device, AsyncResource>();

/**
 * Replaces the process-wide resource for device memory on `device` (RMM's
 * `set_current_device_resource`): every allocation of cudaDevice memory on that device that was given no
 * resource of its own goes through it from now on (graph pools in `@hs/runtime`, `TensorPool`,
 * `GridHandle` copies to the device). `null` restores the default (`defaultResource(backend,
 * 'cudaDevice', device)`). It must be stream-ordered (four methods); lift a synchronous one explicitly with
 * `AsyncFromSync`. Blocks already handed out stay with the resource that made them, so keep the
 * previous one alive until they are returned.
 * @returns the resource it replaces, `null` for the default.
 * @throws HsError InvalidArgument when `device` is not a CUDA device or `resource` is not an async resource
 *   (nor `null`), or when it declares (see `resourceOrigin`) memory other than cudaDevice memory on `device`.
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, GridType, HostResource, StatisticsResource, pointsToGrid, setCurrentDeviceResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const stats = new StatisticsResource(new DeviceResource(backend, Device.cuda(0)));
 * const previous = setCurrentDeviceResource(Device.cuda(0), stats);
 * try {
 *   const grid = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0, 8, 8, 8]) }, { gridType: GridType.Float }));
 *   const onDevice = unwrap(grid.copyTo(stream)); // given no resource: the current device resource
 *   console.log(`device bytes counted by stats: ${stats.statistics.bytes.current} (grid: ${onDevice.sizeBytes})`);
 *   onDevice.dispose();
 *   grid.dispose();
 *   await backend.synchronizeStream(stream);
 * } finally {
 *   setCurrentDeviceResource(Device.cuda(0), previous); // process-wide: restore it
 * }
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export function setCurrentDeviceResource(device: Device, resource: AsyncResource | null): AsyncResource | null {
  if (!(device instanceof Device) || !device.isCuda) {
    throw new HsError(ErrorCode.InvalidArgument, `setCurrentDeviceResource: needs a CUDA device such as Device.cuda(0), got ${String(device)}`);
  }
  if (resource !== null) {
    if (!isAsyncResource(resource)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        'setCurrentDeviceResource: the resource must be stream-ordered (allocate, deallocate, allocateAsync, deallocateAsync); lift a synchronous one with new AsyncFromSync(backend, resource)',
      );
    }
    const origin = resourceOrigin(resource);
    if (origin !== null && (origin.kind !== MemoryKind.CudaDevice || origin.device !== device)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `setCurrentDeviceResource: the resource hands out ${origin.kind} memory on ${origin.device.toString()}, not cudaDevice memory on ${device.toString()}`,
      );
    }
  }
  const previous = current.get(device) ?? null;
  if (resource === null) current.delete(device);
  else current.set(device, resource);
  return previous;
}

/**
 * The resource cudaDevice allocations on `device` of `backend` use when given none (RMM's
 * `get_current_device_resource`): the one `setCurrentDeviceResource` installed, else
 * `defaultResource(backend, 'cudaDevice', device)`.
 * @returns InvalidArgument when `device` is not a device of `backend`, or when the installed resource
 *   declares another backend (hs orders memory only with the backend that made it: install a resource of
 *   this backend, or pass one explicitly).
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, currentDeviceResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // a library that allocates device memory when its caller passed no resource
 * function scratch(bytes: number) {
 *   const resource = unwrap(currentDeviceResource(backend, Device.cuda(0)));
 *   const block = unwrap(resource.allocate(bytes, 256));
 *   return { block, free: () => unwrap(resource.deallocate(block, bytes, 256)) };
 * }
 * const { block, free } = scratch(1 << 20);
 * console.log(`${block?.byteLength} bytes of ${block?.memory.kind} memory`);
 * free();
 * console.log(`nothing installed, so the default: ${unwrap(currentDeviceResource(backend, Device.cuda(0))) instanceof DeviceResource}`);
 * ```
 */
export function currentDeviceResource(backend: Backend, device: Device): Result<AsyncResource> {
  const installed = current.get(device);
  if (installed === undefined) return defaultResource(backend, MemoryKind.CudaDevice, device) as Result<AsyncResource>;
  const origin = resourceOrigin(installed);
  if (origin !== null && origin.backend !== null && origin.backend !== backend) {
    return err(
      ErrorCode.InvalidArgument,
      `the current device resource of ${device.toString()} belongs to another backend; install one made with this backend (setCurrentDeviceResource) or pass a resource explicitly`,
    );
  }
  if (!backend.devices.includes(device)) {
    return err(ErrorCode.InvalidArgument, `currentDeviceResource: ${device.toString()} is not a device of the backend (${backend.devices.map(String).join(', ') || 'none'})`);
  }
  return ok(installed);
}
