/**
 * `@hs/pool/test`: the TensorPool conformance suite for vitest, with the harness type it runs on and the
 * host-backend harness. Import it only from test files: it loads `vitest` (an optional peer dependency)
 * and `@hs/pool` itself, never the other way round.
 * @packageDocumentation
 */
export { describePoolConformance, type PoolConformanceOptions } from './pool-conformance.js';
export type { PoolConformanceHarness } from './pool-harness.js';
export { makeHostHarness } from './host-harness.js';
