export { runHs, HS_CLI_VERSION } from './hs-program.js';
export type { CliIo, ProgressStream } from './cli-io.js';
export { ExitCode } from './exit-codes.js';
export type { ExitCodeValue } from './exit-codes.js';
export type { BenchReport, BenchSeries } from './bench-report-schema.js';
export { BENCH_SECTIONS, parseBenchSections } from './bench-sections.js';
export type { BenchSection } from './bench-sections.js';
