import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { leakCounts, leakTracker } from '../src/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const leaks = leakTracker('TestOwner');

/** An owner of a pretend allocation: `dispose()` unregisters, dropping it undisposed runs `release`. */
class TestOwner {
  readonly #token = {};
  constructor(label: string, released: string[], failing = false) {
    leaks.track(
      this,
      {
        label,
        release: () => {
          if (failing) throw new Error(`cannot free ${label}`);
          released.push(label);
        },
      },
      this.#token,
    );
  }
  dispose(): void {
    leaks.untrack(this.#token);
  }
}

describe('leakTracker', () => {
  it('releases and counts collected owners, not disposed ones; one warning per class with labels, failures and (HS_LEAK_STACKS=1) creation stacks', async () => {
    vi.stubEnv('HS_LEAK_STACKS', '1');
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const released: string[] = [];
    (() => {
      new TestOwner('disposed one', released).dispose();
      new TestOwner('first', released);
      new TestOwner('second', released, true);
    })();
    for (let round = 0; round < 50 && (leakCounts().TestOwner ?? 0) < 2; round++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
    await vi.waitFor(() => expect(warnings).toHaveBeenCalledTimes(1));
    expect(leakCounts().TestOwner).toBe(2);
    expect(released).toEqual(['first']);
    const [message, options] = warnings.mock.calls[0] as [string, { code: string }];
    expect(options).toEqual({ code: 'HS_LEAK' });
    expect(message).toMatch(/^2 TestOwner object\(s\) were garbage-collected without dispose\(\) \((first, second|second, first)\); releasing failed: cannot free second\./);
    expect(message).toContain('created at:');
    expect(message).toContain('leak-report.test.ts');
    expect(message).not.toContain('disposed one');
    warnings.mockRestore();
    vi.unstubAllEnvs();
  });
});
