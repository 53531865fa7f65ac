import { describe, expect, it } from 'vitest';
import type { CudaNativeBinding } from '@hs/cuda-native';
import { HostCallRegistry } from '../src/cuda/host-call-registry.js';

// A fake addon: records what the registry enqueues, and delivers ids when the test says so.
const enqueued: string[] = [];
let dispatch: (id: number) => void = () => undefined;
let notifyStatus = 0;
const fake = {
  setHostCallDispatcher: (fn: (id: number) => void) => {
    dispatch = fn;
  },
  launchHostFunc: (stream: bigint, id: number, blocking: boolean) => {
    enqueued.push(`host function ${stream} ${id} ${blocking}`);
    return 0;
  },
  notifyWhenDone: (stream: bigint, device: number, id: number) => {
    enqueued.push(`waiter ${stream} ${device} ${id}`);
    return notifyStatus;
  },
} as unknown as CudaNativeBinding;

describe('HostCallRegistry.notify', () => {
  const registry = HostCallRegistry.of(fake);

  it('uses the completion waiter when asked and the addon has one; the delivered id runs the closure once', () => {
    enqueued.length = 0;
    let runs = 0;
    expect(registry.notify(7n, 1, () => runs++, true)).toBe(0);
    expect(enqueued).toHaveLength(1);
    const [kind, stream, device, id] = (enqueued[0] as string).split(' ');
    expect([kind, stream, device]).toEqual(['waiter', '7', '1']);
    dispatch(Number(id));
    dispatch(Number(id));
    expect(runs).toBe(1);
  });

  it('falls back to a non-blocking host function when not asked to use the waiter', () => {
    enqueued.length = 0;
    let runs = 0;
    expect(registry.notify(9n, 0, () => runs++, false)).toBe(0);
    expect(enqueued).toHaveLength(1);
    const [kind, , stream, id, blocking] = (enqueued[0] as string).split(' ');
    expect([kind, stream, blocking]).toEqual(['host', '9', 'false']);
    dispatch(Number(id));
    expect(runs).toBe(1);
  });

  it('returns the CUDA status of a refused enqueue and forgets its closure', () => {
    enqueued.length = 0;
    notifyStatus = 400;
    let runs = 0;
    expect(registry.notify(3n, 0, () => runs++, true)).toBe(400);
    notifyStatus = 0;
    const id = Number((enqueued[0] as string).split(' ')[3]);
    dispatch(id);
    expect(runs).toBe(0);
  });
});
