import { ErrorCode, HsError } from '@hs/streams';

/**
 * DLPack `DLDataTypeCode` values: the type family of a tensor element.
 * Spec: DLPack data types used by "Foreign tensors imported through DLPack" (holoscan-5.0-tensors-in-depth).
 * @example
 * ```ts
 * import { DType, DTypeCode } from '@hs/tensor';
 *
 * const half = DType.of(DTypeCode.Float, 16);
 * console.log(`${half} is float16: ${half === DType.float16}, ${half.itemSize} bytes`); // interned, so === compares
 * ```
 */
export enum DTypeCode {
  /** Signed two's-complement integer. */
  Int = 0,
  /** Unsigned integer. */
  UInt = 1,
  /** IEEE 754 binary floating point. */
  Float = 2,
  /** bfloat16 (brain floating point). */
  Bfloat = 4,
  /** Complex number: two floats of `bits / 2` each. */
  Complex = 5,
  /** Boolean, one byte per lane. */
  Bool = 6,
}

const FAMILY_NAMES: Readonly<Record<DTypeCode, string>> = {
  [DTypeCode.Int]: 'int',
  [DTypeCode.UInt]: 'uint',
  [DTypeCode.Float]: 'float',
  [DTypeCode.Bfloat]: 'bfloat',
  [DTypeCode.Complex]: 'complex',
  [DTypeCode.Bool]: 'bool',
};

const FAMILY_CODES: ReadonlyMap<string, DTypeCode> = new Map(
  (Object.entries(FAMILY_NAMES) as [string, string][]).map(([code, family]) => [family, Number(code) as DTypeCode]),
);

const NAME_PATTERN = /^(int|uint|float|bfloat|complex|bool)(\d+)?(?:x(\d+))?$/;

/**
 * An element type in DLPack terms: a type code, a bit width per lane and a lane count. Instances are
 * interned, so `===` compares dtypes. Only whole-byte elements are representable (`bits * lanes` a
 * multiple of 8): hs tensors address memory in bytes.
 *
 * Spec: the `DLDataType` carried by every tensor (holoscan-5.0-tensors-in-depth, "Emit: commit records readiness").
 * @example
 * ```ts
 * import { DType } from '@hs/tensor';
 *
 * const rgba = DType.parse('uint8x4'); // 4 lanes of uint8: one RGBA pixel per element
 * if (rgba === undefined) throw new Error('not a dtype name');
 * console.log(`${rgba}: ${rgba.itemSize} bytes per element, float32 has ${DType.float32.itemSize}`);
 * ```
 */
export class DType {
  private static readonly interned = new Map<string, DType>();

  /** 8-bit signed integer. */
  static readonly int8 = DType.of(DTypeCode.Int, 8);
  /** 16-bit signed integer. */
  static readonly int16 = DType.of(DTypeCode.Int, 16);
  /** 32-bit signed integer. */
  static readonly int32 = DType.of(DTypeCode.Int, 32);
  /** 64-bit signed integer. */
  static readonly int64 = DType.of(DTypeCode.Int, 64);
  /** 8-bit unsigned integer. */
  static readonly uint8 = DType.of(DTypeCode.UInt, 8);
  /** 16-bit unsigned integer. */
  static readonly uint16 = DType.of(DTypeCode.UInt, 16);
  /** 32-bit unsigned integer. */
  static readonly uint32 = DType.of(DTypeCode.UInt, 32);
  /** 64-bit unsigned integer. */
  static readonly uint64 = DType.of(DTypeCode.UInt, 64);
  /** IEEE half precision. */
  static readonly float16 = DType.of(DTypeCode.Float, 16);
  /** IEEE single precision. */
  static readonly float32 = DType.of(DTypeCode.Float, 32);
  /** IEEE double precision. */
  static readonly float64 = DType.of(DTypeCode.Float, 64);
  /** bfloat16. */
  static readonly bfloat16 = DType.of(DTypeCode.Bfloat, 16);
  /** Boolean stored in one byte (DLPack `kDLBool`, 8 bits). */
  static readonly bool = DType.of(DTypeCode.Bool, 8);
  /** Complex of two float32 (64 bits). */
  static readonly complex64 = DType.of(DTypeCode.Complex, 64);
  /** Complex of two float64 (128 bits). */
  static readonly complex128 = DType.of(DTypeCode.Complex, 128);

  /** Bytes per element (all lanes): `bits * lanes / 8`. */
  readonly itemSize: number;
  /** Canonical name: `uint8`, `float32`, `bool`, or `float32x4` for four lanes. */
  readonly name: string;

  private constructor(
    /** DLPack type code. */
    readonly code: DTypeCode,
    /** Bits per lane. */
    readonly bits: number,
    /** Lanes per element (1 for scalars; more for vector types). */
    readonly lanes: number,
  ) {
    this.itemSize = (bits * lanes) / 8;
    const family = FAMILY_NAMES[code];
    const base = code === DTypeCode.Bool && bits === 8 ? family : `${family}${bits}`;
    this.name = lanes === 1 ? base : `${base}x${lanes}`;
  }

  /**
   * The interned dtype for a DLPack code, bit width and lane count.
   * @param code DLPack type code.
   * @param bits bits per lane: 8, 16, 32 or 64 for integers; 16, 32 or 64 for floats; 16 for bfloat;
   *   64 or 128 for complex; 8 for bool.
   * @param lanes lanes per element, a positive integer (default 1).
   * @throws HsError `InvalidArgument` for an unknown code, a bit width the code does not allow, or a
   *   non-positive lane count.
   */
  static of(code: DTypeCode, bits: number, lanes = 1): DType {
    if (!isAllowedWidth(code, bits)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `no DLPack dtype with code ${String(code)} and ${String(bits)} bits; use a DTypeCode with a width it allows (for example DType.of(DTypeCode.Float, 32))`,
      );
    }
    if (!Number.isSafeInteger(lanes) || lanes < 1) {
      throw new HsError(ErrorCode.InvalidArgument, `dtype lanes must be a positive integer, got ${String(lanes)}`);
    }
    const key = `${code}:${bits}:${lanes}`;
    let dtype = DType.interned.get(key);
    if (dtype === undefined) {
      dtype = new DType(code, bits, lanes);
      DType.interned.set(key, dtype);
    }
    return dtype;
  }

  /**
   * Parses a canonical name (`uint8`, `float32`, `bfloat16`, `bool`, `complex64`, `float32x4`).
   * Returns `undefined` for anything that does not name a valid dtype.
   */
  static parse(name: string): DType | undefined {
    const m = NAME_PATTERN.exec(name);
    if (m === null) return undefined;
    const code = FAMILY_CODES.get(m[1] as string) as DTypeCode;
    const bits = m[2] === undefined ? (code === DTypeCode.Bool ? 8 : Number.NaN) : Number(m[2]);
    const lanes = m[3] === undefined ? 1 : Number(m[3]);
    if (!isAllowedWidth(code, bits) || !Number.isSafeInteger(lanes) || lanes < 1) return undefined;
    return DType.of(code, bits, lanes);
  }

  /** The canonical name. */
  toString(): string {
    return this.name;
  }
}

function isAllowedWidth(code: DTypeCode, bits: number): boolean {
  switch (code) {
    case DTypeCode.Int:
    case DTypeCode.UInt:
      return bits === 8 || bits === 16 || bits === 32 || bits === 64;
    case DTypeCode.Float:
      return bits === 16 || bits === 32 || bits === 64;
    case DTypeCode.Bfloat:
      return bits === 16;
    case DTypeCode.Complex:
      return bits === 64 || bits === 128;
    case DTypeCode.Bool:
      return bits === 8;
    default:
      return false;
  }
}
