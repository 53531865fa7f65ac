/**
 * Test helpers of `@hs/runtime` (the `./test` subpath): not part of the runtime's hot path and never
 * imported by it.
 */
export { ManualClock } from './manual-clock.js';
