/**
 * The layouts of the example's tensors. Every number is a little-endian float64, so the integer
 * fields (indices, session-clock nanoseconds) are exact below 2^53 (about 104 days of clock time).
 */

/** IMU sample: float64 `[8]` = sample index (1, 2, ...), time (session-clock ns), gyro x y z (rad/s), accel x y z (m/s^2). */
export const ImuSample = Object.freeze({ length: 8, index: 0, timeNs: 1, gyro: 2, accel: 5 });

/**
 * Fusion result per camera frame: float64 `[8]` = frame index, frame time (ns), IMU samples integrated,
 * first and last sample index (0 when none), then the integrated orientation delta roll, pitch, yaw (rad).
 */
export const FusionResult = Object.freeze({ length: 8, frame: 0, timeNs: 1, samples: 2, firstSample: 3, lastSample: 4, roll: 5, pitch: 6, yaw: 7 });

/**
 * Camera frame: uint8 `[H + 1, W, 4]`. Row 0 is an embedded-data line, as image sensors send one ahead
 * of the pixels: its first 16 bytes are two float64 values, frame index (1, 2, ...) and capture time
 * (session-clock ns); rows 1..H are the RGBA photo.
 */
export const FrameStamp = Object.freeze({ values: 2, index: 0, timeNs: 1 });
