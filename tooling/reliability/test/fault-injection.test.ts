import { beforeAll, describe, expect, it } from 'vitest';
import { kernelFaults, resourceFaults, sessionStartFailures, stuckConsumer, type ScenarioOutcome } from '../src/fault-scenarios.js';

describe('fault injection (FaultyBackend under RunSession)', () => {
  it('session start fails cleanly for every allocation, event and stream it cannot make', () => {
    const outcome = sessionStartFailures();
    expect(outcome.problems).toEqual([]);
    expect(outcome.cases).toBeGreaterThan(5);
    expect(outcome.faultsInjected).toBeGreaterThanOrEqual(outcome.cases);
  });

  it('FaultyResource under the NanoVDB builder: every failed allocation gives OutOfMemory and leaves nothing outstanding', () => {
    const outcome = resourceFaults([1, 2, 3, 4, 5]);
    expect(outcome.problems).toEqual([]);
    expect(outcome.cases).toBeGreaterThan(3);
    expect(outcome.faultsInjected).toBeGreaterThan(outcome.cases - 6);
  });

  describe('a stuck consumer (its release events never complete)', () => {
    let outcome: ScenarioOutcome;
    beforeAll(async () => {
      outcome = await stuckConsumer([3]);
    });

    it('shows up as backpressure, never a blocked JS thread, and leaks nothing once it ends', () => {
      expect(outcome.faultsInjected).toBeGreaterThan(0);
      expect(outcome.wrongOutcomes).toBe(0);
      expect(outcome.leaks).toBe(0);
      expect(outcome.problems.filter((p) => p.includes('JS thread') || p.includes('never settled'))).toEqual([]);
    });

    // The graph gets drainTimeoutMs to drain after stop(); past it the run is abandoned with InvalidState.
    it('stop() returns within drainTimeoutMs + 5 s', () => {
      expect(outcome.hangs).toBe(0);
    });
  });

  describe('a kernel that faults its stream', () => {
    let outcome: ScenarioOutcome;
    beforeAll(async () => {
      outcome = await kernelFaults([1, 7]);
    });

    it('ends the run within the bound and leaks nothing', () => {
      expect(outcome.faultsInjected).toBe(2);
      expect(outcome.hangs).toBe(0);
      expect(outcome.leaks).toBe(0);
    });

    // Event polls cannot carry a fault; the session synchronizes its streams once at the end of a run.
    it('ends the run with DeviceError', () => {
      expect(outcome.wrongOutcomes).toBe(0);
    });
  });
});
