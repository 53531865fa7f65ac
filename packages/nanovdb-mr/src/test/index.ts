/**
 * `@hs/nanovdb-mr/test`: the memory-resource conformance suite for vitest. Import it only from test
 * files: it loads `vitest` (an optional peer dependency) and `@hs/nanovdb-mr` itself, never the other
 * way round.
 * @packageDocumentation
 */
export { describeResourceConformance, type ResourceFixture } from './resource-conformance.js';
