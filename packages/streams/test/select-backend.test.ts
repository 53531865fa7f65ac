import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, selectBackend, type Backend } from '../src/index.js';

function expectError(result: ReturnType<typeof selectBackend>, code: ErrorCode, text: RegExp): void {
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.error.code).toBe(code);
    expect(result.error.message).toMatch(text);
  }
}

describe('selectBackend', () => {
  it('auto-detects the host backend when nothing is chosen', () => {
    const r = selectBackend({ env: {} });
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
    expectError(selectBackend({ backend: 'cuda', env: { HS_BACKEND: 'host' } }), ErrorCode.NotSupported, /@hs\/cuda-native.*issue #3/);
  });

  it('reads HS_BACKEND when no option is given, treating empty as unset', () => {
    expectError(selectBackend({ env: { HS_BACKEND: 'cuda' } }), ErrorCode.NotSupported, /HS_BACKEND/);
    const r = selectBackend({ env: { HS_BACKEND: '' } });
    expect(r.ok && r.value.name).toBe('host');
    if (r.ok) r.value.dispose();
  });

  it('rejects unknown names, listing the allowed values', () => {
    expectError(selectBackend({ env: { HS_BACKEND: 'metal' } }), ErrorCode.InvalidArgument, /"metal".*'host' and 'cuda'/);
    expectError(selectBackend({ backend: 'gpu' as 'host' }), ErrorCode.InvalidArgument, /'host' and 'cuda'/);
  });

  it('passes hostOptions through and turns bad ones into InvalidArgument', () => {
    const r = selectBackend({ env: {}, hostOptions: { deviceCount: 2, orderingChecker: true } });
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.devices).toHaveLength(2);
      expect(r.value.orderingChecker?.violations).toEqual([]);
      r.value.dispose();
    }
    expectError(selectBackend({ env: {}, hostOptions: { deviceCount: -3 } }), ErrorCode.InvalidArgument, /deviceCount/);
  });
});
