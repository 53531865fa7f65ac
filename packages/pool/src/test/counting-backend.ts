import { ErrorCode, err, type Backend } from '@hs/streams';

/** Live-object counts and call counts seen by `countingBackend`. */
export interface BackendTally {
  liveAllocations: number;
  liveEvents: number;
  allocateCalls: number;
  createEventCalls: number;
  queryEventsCalls: number;
}

/**
 * Wraps a backend to count live allocations and events and `queryEvents` calls, and to make the
 * `failAt`-th resource creation (allocate, allocateAsync or createEvent, counted together, 1-based) fail with
 * `DeviceError`. Works over any backend.
 */
export function countingBackend(inner: Backend, failAt = 0): { backend: Backend; tally: BackendTally } {
  const tally: BackendTally = { liveAllocations: 0, liveEvents: 0, allocateCalls: 0, createEventCalls: 0, queryEventsCalls: 0 };
  let creations = 0;
  const injected = () => err(ErrorCode.DeviceError, `injected failure at resource creation ${creations}`);
  const backend = new Proxy(inner, {
    get(target, prop, receiver) {
      switch (prop) {
        case 'allocate':
          return (...args: Parameters<Backend['allocate']>) => {
            tally.allocateCalls++;
            if (++creations === failAt) return injected();
            const r = target.allocate(...args);
            if (r.ok) tally.liveAllocations++;
            return r;
          };
        case 'allocateAsync':
          return (...args: Parameters<Backend['allocateAsync']>) => {
            tally.allocateCalls++;
            if (++creations === failAt) return injected();
            const r = target.allocateAsync(...args);
            if (r.ok) tally.liveAllocations++;
            return r;
          };
        case 'free':
          return (...args: Parameters<Backend['free']>) => {
            const r = target.free(...args);
            if (r.ok) tally.liveAllocations--;
            return r;
          };
        case 'freeAsync':
          return (...args: Parameters<Backend['freeAsync']>) => {
            const r = target.freeAsync(...args);
            if (r.ok) tally.liveAllocations--;
            return r;
          };
        case 'createEvent':
          return (...args: Parameters<Backend['createEvent']>) => {
            tally.createEventCalls++;
            if (++creations === failAt) return injected();
            const r = target.createEvent(...args);
            if (r.ok) tally.liveEvents++;
            return r;
          };
        case 'destroyEvent':
          return (...args: Parameters<Backend['destroyEvent']>) => {
            const r = target.destroyEvent(...args);
            if (r.ok) tally.liveEvents--;
            return r;
          };
        case 'queryEvents':
          return (...args: Parameters<Backend['queryEvents']>) => {
            tally.queryEventsCalls++;
            return target.queryEvents(...args);
          };
        default: {
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
      }
    },
  });
  return { backend, tally };
}
