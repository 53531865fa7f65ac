// Types of gpu-suites.mjs (plain JS: it runs on the GPU machine with the packed node binary).
export declare const GPU_SUITE_FILES: readonly string[];
export declare const GPU_PACKED_EXTRAS: readonly (string | { in: string; out: string })[];
export declare const SANITIZER_TOOLS: readonly string[];
export declare const DEVICE_MODES: readonly string[];
export declare function suiteName(file: string): string;
export interface GpuSuite {
  name: string;
  file: string;
  packageDir: string;
  testFile: string;
}
export declare const GPU_SUITES: readonly GpuSuite[];
export declare const GPU_SUITE_NAMES: readonly string[];
export declare class UsageError extends Error {}
export interface GpuArgs {
  help: boolean;
  mode: string | null;
  only: string[];
  sanitize: string[];
  sanitizeGiven: boolean;
}
export declare function parseGpuArgs(argv: readonly string[], options?: { device?: boolean; env?: Record<string, string | undefined> }): GpuArgs;
export declare function gpuUsage(options?: { device?: boolean }): string;
