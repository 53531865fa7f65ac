/** Standard gravity, m/s^2. */
export const GRAVITY = 9.80665;

/**
 * The simulated motion: the sensor sits level and turns slowly about its vertical axis at `yawRate`
 * rad/s (no roll or pitch), so the true gyro reading is `(0, 0, yawRate)` rad/s and the true
 * accelerometer reading is gravity alone, `(0, 0, GRAVITY)` m/s^2 (a level accelerometer at rest reads
 * +g on its up axis). Each reading adds white Gaussian noise of the given standard deviations.
 */
export interface ImuMotion {
  /** Yaw rate, rad/s. */
  readonly yawRate: number;
  /** Gyro noise standard deviation per axis, rad/s. */
  readonly gyroNoise: number;
  /** Accelerometer noise standard deviation per axis, m/s^2. */
  readonly accelNoise: number;
  /** Seed of the noise generator; equal seeds give equal samples. */
  readonly seed: number;
}

/** The example's motion: 0.5 rad/s yaw (about 28.6 degrees per second), 0.01 rad/s and 0.05 m/s^2 noise, seed 18. */
export const DEFAULT_MOTION: ImuMotion = Object.freeze({ yawRate: 0.5, gyroNoise: 0.01, accelNoise: 0.05, seed: 18 });

/**
 * A deterministic IMU reading generator: `next(out)` writes the next reading, gyro x, y, z (rad/s) then
 * accelerometer x, y, z (m/s^2), into `out[0..6)`. The noise comes from mulberry32 (a 32-bit seeded
 * PRNG) through the Box-Muller transform, one normal deviate per axis, so reading j is the same for
 * the same seed however the readings are consumed. Allocates nothing per reading.
 */
export class ImuModel {
  #state: number;
  #spare = 0;
  #hasSpare = false;

  constructor(private readonly motion: ImuMotion = DEFAULT_MOTION) {
    this.#state = motion.seed >>> 0;
  }

  /** Writes reading j+1 (gyro xyz, accel xyz) into `out[0..6)`. */
  next(out: Float64Array): void {
    const { yawRate, gyroNoise, accelNoise } = this.motion;
    out[0] = gyroNoise * this.#normal();
    out[1] = gyroNoise * this.#normal();
    out[2] = yawRate + gyroNoise * this.#normal();
    out[3] = accelNoise * this.#normal();
    out[4] = accelNoise * this.#normal();
    out[5] = GRAVITY + accelNoise * this.#normal();
  }

  /** A standard normal deviate (Box-Muller, two per pair of uniforms). */
  #normal(): number {
    if (this.#hasSpare) {
      this.#hasSpare = false;
      return this.#spare;
    }
    const u = 1 - this.#uniform(); // (0, 1]: log(u) is finite
    const v = this.#uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.#spare = r * Math.sin(2 * Math.PI * v);
    this.#hasSpare = true;
    return r * Math.cos(2 * Math.PI * v);
  }

  /** mulberry32: a uniform deviate in [0, 1). */
  #uniform(): number {
    this.#state = (this.#state + 0x6d2b79f5) | 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
