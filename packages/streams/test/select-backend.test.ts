import { describe, expect, it } from 'vitest';
import { CudaBackend, ErrorCode, HostBackend, selectBackend, type Backend } from '../src/index.js';

const gpu = CudaBackend.available();

function expectError(result: ReturnType<typeof selectBackend>, code: ErrorCode, text: RegExp): void {
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.error.code).toBe(code);
    expect(result.error.message).toMatch(text);
  }
}

describe('selectBackend', () => {
  it('auto-detects the CUDA backend when a device is usable, else the host backend', () => {
    const r = selectBackend({ env: {} });
    expect(r.ok && r.value.name).toBe(gpu ? 'cuda' : 'host');
    if (r.ok) r.value.dispose();
  });

  it('refuses a misspelt option with InvalidArgument naming the closest field', () => {
    expectError(selectBackend({ hostOption: { deviceCount: 2 } } as never), ErrorCode.InvalidArgument, /selectBackend: unknown option 'hostOption'; did you mean 'hostOptions'\?/);
    expectError(selectBackend('host' as never), ErrorCode.InvalidArgument, /^InvalidArgument: selectBackend: options must be an object, not a string$/);
  });

  it('HS_BACKEND=host forces the host backend', () => {
    const r = selectBackend({ env: { HS_BACKEND: 'host' } });
    expect(r.ok && r.value instanceof HostBackend).toBe(true);
    if (r.ok) r.value.dispose();
  });

  it('returns an explicit backend object as is, ignoring the environment', () => {
    const mine: Backend = new HostBackend();
    const r = selectBackend({ backend: mine, env: { HS_BACKEND: 'nonsense' } });
    expect(r.ok && r.value).toBe(mine);
    mine.dispose();
  });

  it('prefers the explicit name over HS_BACKEND', () => {
    const r = selectBackend({ backend: 'host', env: { HS_BACKEND: 'cuda' } });
    expect(r.ok && r.value.name).toBe('host');
    if (r.ok) r.value.dispose();
    const cuda = selectBackend({ backend: 'cuda', env: { HS_BACKEND: 'host' } });
    if (gpu) {
      expect(cuda.ok && cuda.value.name).toBe('cuda');
      if (cuda.ok) cuda.value.dispose();
    } else {
      expectError(cuda, ErrorCode.NotSupported, /options\.backend chose 'cuda'.*(no device|not built|@hs\/cuda-native)/);
    }
  });

  it('reads HS_BACKEND when no option is given, treating empty as unset', () => {
    const cuda = selectBackend({ env: { HS_BACKEND: 'cuda' } });
    if (gpu) {
      expect(cuda.ok && cuda.value.name).toBe('cuda');
      if (cuda.ok) cuda.value.dispose();
    } else {
      expectError(cuda, ErrorCode.NotSupported, /HS_BACKEND chose 'cuda'/);
    }
    const r = selectBackend({ env: { HS_BACKEND: '' } });
    expect(r.ok && r.value.name).toBe(gpu ? 'cuda' : 'host');
    if (r.ok) r.value.dispose();
  });

  it('rejects unknown names, listing the allowed values', () => {
    expectError(selectBackend({ env: { HS_BACKEND: 'metal' } }), ErrorCode.InvalidArgument, /"metal".*'host' and 'cuda'/);
    expectError(selectBackend({ backend: 'gpu' as 'host' }), ErrorCode.InvalidArgument, /'host' and 'cuda'/);
  });

  it('passes hostOptions through and turns bad ones into InvalidArgument', () => {
    const r = selectBackend({ env: { HS_BACKEND: 'host' }, hostOptions: { deviceCount: 2, orderingChecker: true } });
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.devices).toHaveLength(2);
      expect(r.value.orderingChecker?.violations).toEqual([]);
      r.value.dispose();
    }
    expectError(selectBackend({ env: { HS_BACKEND: 'host' }, hostOptions: { deviceCount: -3 } }), ErrorCode.InvalidArgument, /deviceCount/);
  });
});
