/**
 * The process object, read once: in an ES module `process` is a global accessor, a getter call on every
 * use. Its `hrtime` property is still looked up at every read (a test may replace it).
 */
const nodeProcess = process;

/**
 * The monotonic clock activation latencies are measured with, in milliseconds (an arbitrary origin:
 * only differences mean anything). It reads `process.hrtime()` and uses the pair at once, which V8
 * optimizes to no allocation; Node 20's `performance.now()` reads the same clock but leaves a short-lived
 * array behind on every call, garbage the GC must chase on the hot path (two reads per frame of a chain).
 */
export function latencyNowMs(): number {
  const time = nodeProcess.hrtime();
  return (time[0] as number) * 1e3 + (time[1] as number) / 1e6;
}
