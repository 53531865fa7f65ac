import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { HostBackend, leakCounts, unwrap } from '@hs/streams';
import { describe, expect, it, vi } from 'vitest';
import { RunSession } from '../src/index.js';
import { deviceChain } from './device-chain.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('sessions and pools dropped without dispose() are reported', () => {
  it('counts the session and its two pools, warns once per class with the plan and pool names, and not for disposed ones', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const backend = new HostBackend();
    unwrap(RunSession.create(deviceChain(2).plan, { backend })).dispose();
    const before = { sessions: leakCounts().RunSession ?? 0, pools: leakCounts().TensorPool ?? 0 };
    (() => void unwrap(RunSession.create(deviceChain(2).plan, { backend })))();
    for (let round = 0; round < 50 && (leakCounts().TensorPool ?? 0) < before.pools + 2; round++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
    expect(leakCounts().RunSession).toBe(before.sessions + 1);
    expect(leakCounts().TensorPool).toBe(before.pools + 2);
    await vi.waitFor(() => expect(warnings.mock.calls.length).toBeGreaterThanOrEqual(2));
    const messages = warnings.mock.calls.map(([m]) => String(m));
    expect(messages.find((m) => m.includes('RunSession'))).toMatch(/1 RunSession object\(s\) were garbage-collected without dispose\(\) \(plan bound\)/);
    expect(messages.find((m) => m.includes('TensorPool'))).toMatch(/2 TensorPool object\(s\).*pool "pool:source.frames" \(\d+ slots\)/);
    backend.dispose();
    warnings.mockRestore();
  });
});
