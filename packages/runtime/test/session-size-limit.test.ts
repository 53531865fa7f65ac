import { type ExecutionPlan } from '@hs/compiler';
import { ErrorCode, HostBackend } from '@hs/streams';
import { describe, expect, it, vi } from 'vitest';
import { MAX_SESSION_OPERATORS, RunSession } from '../src/index.js';
import { deviceChain } from './device-chain.js';

describe('RunSession.create refuses a plan past MAX_SESSION_OPERATORS', () => {
  it('returns ResourceExhausted naming the count and the bound, before any backend or pool is made', () => {
    const { plan } = deviceChain(1);
    // The plan as compiled, but with MAX_SESSION_OPERATORS + 1 operators (compiling that many takes seconds).
    const oversized = Object.create(plan, { operators: { value: new Array(MAX_SESSION_OPERATORS + 1).fill(plan.operators[0]) } }) as ExecutionPlan;
    const made = vi.spyOn(HostBackend.prototype, 'allocate');
    const refused = RunSession.create(oversized, { backend: 'host' });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe(ErrorCode.ResourceExhausted);
      expect(refused.error.message).toContain(`has ${MAX_SESSION_OPERATORS + 1} operators, more than the ${MAX_SESSION_OPERATORS} one session runs`);
    }
    expect(made).not.toHaveBeenCalled();
    made.mockRestore();
    const fits = RunSession.create(plan, { backend: 'host' });
    expect(fits.ok).toBe(true);
    if (fits.ok) fits.value.dispose();
  });
});
