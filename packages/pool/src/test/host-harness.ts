import { HostBackend, unwrap, type Device, type Stream } from '@hs/streams';
import type { PoolConformanceHarness } from './pool-harness.js';

/**
 * The host backend as a {@link PoolConformanceHarness}: a `HostBackend` with manual scheduling and the
 * ordering checker on, made fresh per call. `hold` parks a stream behind an event recorded on a gate
 * stream that is not stepped until released; `settle()` steps the harness's streams round-robin, newest
 * first (so a consumer that forgot to wait would run before its producer and the checker would report
 * it), skipping closed gates. hs runs {@link describePoolConformance} with it in CI.
 * @example The suite on the host backend, in a vitest test file
 * ```ts
 * import { describePoolConformance, makeHostHarness } from '@hs/pool/test';
 *
 * describePoolConformance('HostBackend (manual scheduling, ordering checker on)', makeHostHarness);
 * ```
 */
export function makeHostHarness(): PoolConformanceHarness {
  const backend = new HostBackend({ scheduling: 'manual', orderingChecker: true });
  const device = backend.devices[0] as Device;
  const streams: Stream[] = [];
  const closedGates = new Set<Stream>();
  return {
    backend,
    device,
    createStream(label) {
      const stream = unwrap(backend.createStream(device, { label }));
      streams.push(stream);
      return stream;
    },
    hold(stream) {
      const gate = unwrap(backend.createStream(device, { label: `gate for ${stream.label}` }));
      unwrap(backend.launchHostFunc(gate, () => undefined));
      const opened = unwrap(backend.createEvent(device, { label: `gate for ${stream.label} open` }));
      unwrap(backend.recordEvent(opened, gate));
      unwrap(backend.streamWaitEvent(stream, opened));
      streams.push(gate);
      closedGates.add(gate);
      return () => {
        closedGates.delete(gate);
      };
    },
    async settle() {
      let progress = true;
      while (progress) {
        progress = false;
        for (let i = streams.length - 1; i >= 0; i--) {
          const s = streams[i] as Stream;
          if (!closedGates.has(s) && backend.step(s)) progress = true;
        }
      }
      await Promise.resolve();
    },
    orderingViolations() {
      return backend.orderingChecker?.violations.length ?? 0;
    },
    dispose() {
      backend.dispose();
    },
  };
}
