/** Device families hs knows; numbers are the DLPack `DLDeviceType` codes. */
export enum DeviceType {
  /** Host CPU memory and execution (`kDLCPU`). */
  Cpu = 1,
  /** An NVIDIA GPU reached through the CUDA runtime (`kDLCUDA`). */
  Cuda = 2,
}

/**
 * A device identity: a type and an ordinal. Instances are interned, so `===` compares devices.
 * Spec: "Current limitations" (one device per operator, never guess device 0).
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
   * @throws HsError never; throws `RangeError` when `id` is not a non-negative integer.
   */
  static cuda(id: number): Device {
    return Device.of(DeviceType.Cuda, id);
  }

  /** Interned device for a DLPack type and ordinal. @throws RangeError on a bad ordinal. */
  static of(type: DeviceType, id: number): Device {
    if (!Number.isInteger(id) || id < 0) throw new RangeError(`device ordinal must be a non-negative integer, got ${id}`);
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
    const m = /^cuda:(\d+)$/.exec(text);
    return m ? Device.cuda(Number(m[1])) : undefined;
  }
}
