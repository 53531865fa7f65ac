import type { KernelLaunch } from './backend.js';
import { ErrorCode, HsError } from './errors.js';

/**
 * Throws unless `kernel` is a well-formed `KernelLaunch` (name, reads, writes, numeric params, host).
 * @throws HsError InvalidArgument for a malformed launch (a programmer error).
 */
export function assertKernelShape(kernel: KernelLaunch): void {
  const ok =
    typeof kernel === 'object' &&
    kernel !== null &&
    typeof kernel.name === 'string' &&
    Array.isArray(kernel.reads) &&
    Array.isArray(kernel.writes) &&
    Array.isArray(kernel.params) &&
    typeof kernel.host === 'function';
  let paramsOk = ok;
  for (let i = 0; paramsOk && i < kernel.params.length; i++) paramsOk = typeof kernel.params[i] === 'number';
  if (!paramsOk) {
    throw new HsError(
      ErrorCode.InvalidArgument,
      'launchKernel: expected { name: string, reads: MemoryRange[], writes: MemoryRange[], params: number[], host: function }',
    );
  }
}
