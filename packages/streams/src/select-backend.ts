import type { Backend } from './backend.js';
import { ErrorCode, HsError, err, ok, type Result } from './errors.js';
import { CudaBackend, type CudaBackendOptions } from './cuda/cuda-backend.js';
import { HostBackend } from './host/host-backend.js';
import type { HostBackendOptions } from './host/host-backend-options.js';
import { checkOptionFields } from './option-fields.js';

/** Backend names accepted by `selectBackend` and the `HS_BACKEND` environment variable. */
export type BackendName = 'host' | 'cuda';

const BACKEND_NAMES: readonly BackendName[] = ['host', 'cuda'];

/** Options for `selectBackend`. */
export interface SelectBackendOptions {
  /** An explicit choice: a backend name, or a ready backend returned as is. Wins over the environment. */
  readonly backend?: BackendName | Backend;
  /** Environment to read `HS_BACKEND` from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Options for a `HostBackend` made by this call. */
  readonly hostOptions?: HostBackendOptions;
  /** Options for a `CudaBackend` made by this call. */
  readonly cudaOptions?: CudaBackendOptions;
}

/**
 * Chooses the process's backend: the explicit `options.backend` first, then the `HS_BACKEND` environment
 * variable (`host` | `cuda`; empty counts as unset), then auto-detection: the CUDA backend when
 * `@hs/cuda-native` is built and sees a device, else the host backend. `HS_BACKEND=host` forces the host
 * backend on a GPU machine.
 *
 * Errors: InvalidArgument for an unknown name (the message lists the allowed ones) or bad options;
 * NotSupported for an explicit `cuda` where `@hs/cuda-native` is missing, not built or sees no device
 * (the message says which and what to do); DeviceError when CUDA refuses to set up.
 *
 * @example
 * ```ts
 * import { selectBackend, unwrap } from '@hs/streams';
 *
 * // options.backend, then HS_BACKEND (host | cuda), then auto-detection: CUDA when it sees a device, else host.
 * const backend = unwrap(selectBackend({ hostOptions: { orderingChecker: true } }));
 * console.log(`running on the ${backend.name} backend (${backend.devices.join(', ')}), ordering checker: ${backend.orderingChecker !== undefined}`);
 * backend.dispose();
 *
 * const wrong = selectBackend({ backend: 'gpu' as 'cuda' });
 * if (!wrong.ok) console.log(wrong.error.message); // InvalidArgument: ... allowed values are 'host' and 'cuda'
 * ```
 */
export function selectBackend(options: SelectBackendOptions = {}): Result<Backend> {
  const fields = checkOptionFields('selectBackend', options, ['backend', 'env', 'hostOptions', 'cudaOptions']);
  if (!fields.ok) return fields;
  const explicit = options.backend;
  if (typeof explicit === 'object' && explicit !== null) return ok(explicit);
  let name: string;
  let source: string;
  if (explicit !== undefined) {
    name = explicit;
    source = 'options.backend';
  } else {
    const fromEnv = (options.env ?? process.env)['HS_BACKEND'];
    if (fromEnv !== undefined && fromEnv !== '') {
      name = fromEnv.trim();
      source = 'HS_BACKEND';
    } else {
      name = CudaBackend.available() ? 'cuda' : 'host';
      source = 'auto-detection';
    }
  }
  switch (name) {
    case 'host':
      try {
        return ok(new HostBackend(options.hostOptions));
      } catch (cause) {
        if (cause instanceof HsError) return { ok: false, error: cause };
        throw cause;
      }
    case 'cuda': {
      const cuda = CudaBackend.create(options.cudaOptions);
      if (cuda.ok) return cuda;
      return err(cuda.error.code, `selectBackend: ${source} chose 'cuda', but ${cuda.error.message.replace(/^\w+: /, '')}`, cuda.error);
    }
    default:
      return err(
        ErrorCode.InvalidArgument,
        `selectBackend: unknown backend "${name}" from ${source}; allowed values are ${BACKEND_NAMES.map((n) => `'${n}'`).join(' and ')}`,
      );
  }
}
