/**
 * `@hs/streams/test`: the Backend conformance suite for vitest. Import it only from test files: it loads
 * `vitest` (an optional peer dependency) and `@hs/streams` itself, never the other way round.
 * @packageDocumentation
 */
export { describeBackendConformance, type BackendConformanceOptions } from './backend-conformance.js';
