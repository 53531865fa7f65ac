import { ErrorCode, HsError } from '@hs/streams';
import { type Rational, compareRational, formatRational, multiplyRational, rational } from './rational.js';

function positiveSafeInteger(what: string, value: unknown): bigint {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new HsError(ErrorCode.InvalidArgument, `${what} must be a positive integer (at most 2^53 - 1), got ${String(value)}`);
  }
  return BigInt(value);
}

/**
 * An exact nominal rate in hertz (events per second), a positive rational. Build it with `Rate.hz(60)`
 * or `Rate.ratio(30000, 1001)` (29.97 Hz). Rates compare and multiply exactly; nothing is rounded.
 * Spec: "Size queue entries from nominal rates".
 * @example
 * ```ts
 * import { Rate, RateRatio } from '@hs/compiler';
 *
 * const ntsc = Rate.ratio(30000, 1001); // 29.97 Hz, exact: nothing is rounded
 * const pal = Rate.hz(25);
 * console.log(`${ntsc} is ${ntsc.compare(pal) > 0 ? 'faster' : 'slower'} than ${pal}; every 2nd frame: ${ntsc.scaledBy(new RateRatio(1, 2))}`);
 * console.log(JSON.stringify(ntsc), Rate.hz(60).equals(Rate.ratio(120, 2)));
 * ```
 */
export class Rate {
  /** The rate in hertz as an exact rational. */
  readonly hz: Rational;

  private constructor(hz: Rational) {
    // A copy, frozen with the rate: a Rate is an exact value and nothing can change it afterwards.
    this.hz = Object.freeze({ n: hz.n, d: hz.d });
    Object.freeze(this);
  }

  /**
   * `hz` events per second.
   * @throws HsError `InvalidArgument` unless `hz` is a positive safe integer.
   */
  static hz(hz: number): Rate {
    return new Rate(rational(positiveSafeInteger('Rate.hz(hz)', hz)));
  }

  /**
   * `numerator / denominator` events per second.
   * @throws HsError `InvalidArgument` unless both are positive safe integers.
   */
  static ratio(numerator: number, denominator: number): Rate {
    return new Rate(rational(positiveSafeInteger('Rate.ratio numerator', numerator), positiveSafeInteger('Rate.ratio denominator', denominator)));
  }

  /** @internal A rate from an exact positive rational. */
  static fromRational(hz: Rational): Rate {
    return new Rate(hz);
  }

  /** This rate scaled by `ratio`. */
  scaledBy(ratio: RateRatio): Rate {
    return new Rate(multiplyRational(this.hz, ratio.value));
  }

  /** True when both rates are exactly equal. */
  equals(other: Rate): boolean {
    return compareRational(this.hz, other.hz) === 0;
  }

  /** Negative, zero or positive as this rate is below, equal to or above `other`. */
  compare(other: Rate): number {
    return compareRational(this.hz, other.hz);
  }

  /** `60 Hz`, `30000/1001 Hz`. */
  toString(): string {
    return `${formatRational(this.hz)} Hz`;
  }

  /** `{ hz: "60" }` or `{ hz: "30000/1001" }`: exact, for canonical JSON. */
  toJSON(): {
    /** Exact frequency in Hz as rational text (`n` or `n/d`). */
    hz: string;
  } {
    return { hz: formatRational(this.hz) };
  }
}

/**
 * An exact positive ratio `numerator / denominator`: a derived rate (`follows(input, new RateRatio(1, 4))`)
 * or the compile-wide queue headroom (default `2/1`). Spec: "Size queue entries from nominal rates".
 * @example
 * ```ts
 * import { Graph, Operator, Rate, RateRatio, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const RGBA = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.output('frames').producesTensor({ representation: RGBA, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }).nominalRate(Rate.hz(60));
 *   }
 *   compute(): void {}
 * }
 * class Decimator extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames');
 *     spec.output('preview').producesTensor({ representation: RGBA }).follows(this.frames, new RateRatio(1, 4)); // every 4th frame
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('preview');
 * graph.addFlow(graph.add(new Camera('camera')).frames, graph.add(new Decimator('decimator')).frames);
 * const plan = unwrap(compile(graph, { automaticQueueSizing: { headroomRatio: new RateRatio(3, 2) } })); // a ratio is also the queue headroom
 * const preview = plan.portRates.find((r) => r.port.port === 'preview');
 * console.log(`decimator.preview at ${preview?.active} (${preview?.source}); queue headroom ${plan.options.headroomRatio}`);
 * ```
 */
export class RateRatio {
  /** The ratio as an exact rational (reduced). */
  readonly value: Rational;

  /** @throws HsError `InvalidArgument` unless both are positive safe integers. */
  constructor(
    /** Positive integer. */
    readonly numerator: number,
    /** Positive integer. */
    readonly denominator: number,
  ) {
    this.value = rational(positiveSafeInteger('RateRatio numerator', numerator), positiveSafeInteger('RateRatio denominator', denominator));
    Object.freeze(this);
  }

  /** `1/4`. */
  toString(): string {
    return `${this.numerator}/${this.denominator}`;
  }

  /** `{ ratio: "1/4" }` (reduced), for canonical JSON. */
  toJSON(): {
    /** Exact ratio as reduced rational text (`n/d`). */
    ratio: string;
  } {
    return { ratio: `${this.value.n}/${this.value.d}` };
  }
}
