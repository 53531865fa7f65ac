import { ErrorCode, HsError } from './errors.js';

/**
 * Device families hs knows; numbers are the DLPack `DLDeviceType` codes.
 * @example
 * ```ts
 * import { Device, DeviceType } from '@hs/streams';
 *
 * const gpu = Device.of(DeviceType.Cuda, 0); // DLPack's kDLCUDA = 2
 * console.log(gpu === Device.cuda(0), gpu.type === DeviceType.Cuda, `DLPack device type ${gpu.type}, ordinal ${gpu.id}`);
 * ```
 */
export enum DeviceType {
  /** Host CPU memory and execution (`kDLCPU`). */
  Cpu = 1,
  /** An NVIDIA GPU reached through the CUDA runtime (`kDLCUDA`). */
  Cuda = 2,
}

/**
 * A device identity: a type and an ordinal. Instances are interned, so `===` compares devices.
 * Spec: "Current limitations" (one device per operator, never guess device 0).
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 *
 * const device = Device.parse('cuda:0'); // for example from a --device option
 * if (device === undefined) throw new Error("--device must be 'cpu' or 'cuda:N'");
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(device, { label: 'compute' }));
 * // Devices are interned: === compares them.
 * console.log(`${stream.label} on ${stream.device}, same device: ${stream.device === Device.cuda(0)}, isCuda: ${device.isCuda}`);
 * backend.dispose();
 * ```
 */
export class Device {
  private static readonly interned = new Map<string, Device>();

  private constructor(
    /** DLPack device type. */
    readonly type: DeviceType,
    /** Device ordinal (0 for the CPU). */
    readonly id: number,
  ) {}

  /** The host CPU. */
  static cpu(): Device {
    return Device.of(DeviceType.Cpu, 0);
  }

  /**
   * A CUDA device by ordinal.
   * @throws HsError `InvalidArgument` when `id` is not a whole number >= 0 (0 is the first GPU).
   */
  static cuda(id: number): Device {
    return Device.of(DeviceType.Cuda, id);
  }

  /** Interned device for a DLPack type and ordinal. @throws HsError `InvalidArgument` on an ordinal that is not a whole number >= 0. */
  static of(type: DeviceType, id: number): Device {
    if (!Number.isSafeInteger(id) || id < 0) {
      const shown = typeof id === 'string' ? `${JSON.stringify(id)} (a string)` : String(id);
      throw new HsError(ErrorCode.InvalidArgument, `device ordinal must be a whole number >= 0 (0 is the first device), got ${shown}`);
    }
    const key = `${type}:${id}`;
    let d = Device.interned.get(key);
    if (d === undefined) {
      d = new Device(type, id);
      Device.interned.set(key, d);
    }
    return d;
  }

  /** True for CUDA devices. */
  get isCuda(): boolean {
    return this.type === DeviceType.Cuda;
  }

  /** `cpu` or `cuda:N`. */
  toString(): string {
    return this.type === DeviceType.Cpu ? 'cpu' : `cuda:${this.id}`;
  }

  /** Parses `cpu` or `cuda:N`; returns `undefined` for anything else. */
  static parse(text: string): Device | undefined {
    if (text === 'cpu') return Device.cpu();
    const m = /^cuda:(\d{1,15})$/.exec(text);
    return m ? Device.cuda(Number(m[1])) : undefined;
  }
}
