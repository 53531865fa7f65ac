import { ipcAvailability } from '@hs/ipc';
import { afterEach, describe, expect, it } from 'vitest';
import { crossProcessSoak } from '../src/cross-process-soak.js';

// The short CI version of the cross-process part of `pnpm soak` (HS_SOAK_TOPIC_FRAMES frames there).
const available = ipcAvailability();
if (!available.available) console.log(`cross-process soak test skipped: ${available.reason}`);
const withGc = globalThis as { gc?: () => void };
const hadGc = withGc.gc;
afterEach(() => {
  if (hadGc === undefined) delete withGc.gc;
  else withGc.gc = hadGc;
});

describe.skipIf(!available.available)('cross-process soak (short)', () => {
  it('delivers every frame intact, gets every slot back and samples the producer memory after warm-up and at the end', async () => {
    // vitest runs without --expose-gc: a stand-in gc() turns the sampling on (the figures are then not after a real GC)
    withGc.gc ??= () => undefined;
    const outcome = await crossProcessSoak(5_000, { sampleEveryMs: 20 });
    expect(outcome.problems).toBe(0);
    expect(outcome.consumer).toMatchObject({ ok: true, frames: 5_000, badBytes: 0 });
    expect(outcome.producer).toMatchObject({ ok: true, frames: 5_000, slotsOut: 0 });
    const memory = outcome.producerMemory;
    expect(memory).not.toBeNull();
    expect(memory!.samples).toBeGreaterThan(0);
    expect(memory!.heapAfterWarmup).toBeGreaterThan(0);
    expect(memory!.rssAtEnd).toBeGreaterThan(0);
    expect(memory!.heapGrowth).toBe((memory!.heapAtEnd - memory!.heapAfterWarmup) / memory!.heapAfterWarmup);
  }, 120_000);

  it('beside a hostile same-uid peer (no ATTACH, malformed and partial frames, reconnects, ftruncate on the segments) the good subscriber gets every frame intact', async () => {
    const baseline = await crossProcessSoak(5_000, { sampleEveryMs: 50 });
    const outcome = await crossProcessSoak(5_000, { sampleEveryMs: 50, hostilePeers: 4 });
    expect(baseline.hostile).toBeNull();
    expect(outcome.problems).toBe(0);
    expect(outcome.consumer).toMatchObject({ ok: true, frames: 5_000, badBytes: 0 });
    expect(outcome.producer).toMatchObject({ ok: true, frames: 5_000, slotsOut: 0 });
    const hostile = outcome.hostile!;
    // Every attack ran, the publisher dropped what connected, and no sealed segment changed size.
    for (const kind of ['silent', 'malformed', 'partialFrame', 'reconnect'] as const) expect(hostile.connections[kind]).toBeGreaterThan(0);
    expect(hostile.subscribersLost).toBeGreaterThan(0);
    expect(hostile.truncations['EPERM']).toBeGreaterThan(0);
    expect(Object.keys(hostile.truncations)).toEqual(['EPERM']);
    console.log(
      `good subscriber: ${Math.round(baseline.framesPerSecond)} frames/s alone, ${Math.round(outcome.framesPerSecond)} frames/s beside the hostile peer ` +
        `(ratio ${(outcome.framesPerSecond / baseline.framesPerSecond).toFixed(3)}); hostile ${JSON.stringify(hostile)}`,
    );
  }, 120_000);

  it('reports no producer memory when no gc() is available', async () => {
    delete withGc.gc;
    const outcome = await crossProcessSoak(1_000, { sampleEveryMs: 20 });
    expect(outcome.problems).toBe(0);
    expect(outcome.producerMemory).toBeNull();
  }, 120_000);
});
