import { describe, expect, it } from 'vitest';
import { explainCapacity } from '../src/explain-capacity.js';

describe('derived-capacity example', () => {
  it('prints the spec figures and both renderings of the published lifecycle generation', async () => {
    const explained = await explainCapacity(6);
    const out = explained.join('\n');
    expect(out).toContain('per-slot bytes: 6291456 B = 6 MiB');
    expect(out).toContain('8 entries at 60 Hz (automatic), 16 admitted up to 120 Hz');
    expect(out).toContain('active:   8 + 4 + 1 + 1 = 14 entries; 14 x 6 MiB = 84 MiB');
    expect(out).toContain('admitted: 16 + 4 + 1 + 1 = 22 entries; 22 x 6 MiB = 132 MiB');
    expect(out).toContain('recorder received 6 frames');
    expect(out).toContain('pin: { queueDepth: 8 }');
    const json = JSON.parse(explained[explained.length - 1] as string) as Record<string, unknown>;
    expect(json).toMatchObject({ schema: 'hs.rate-queue-inspection/1', activeDepth: 8, admittedDepth: 16, pin: { queueDepth: 8 } });
  });
});
