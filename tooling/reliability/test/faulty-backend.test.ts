import { Device, ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { FaultyBackend } from '../src/faulty-backend.js';

/** A FaultyBackend whose stream labelled `stuck` gets stuck at its first event record, with that stream and event. */
function stuck() {
  const backend = new FaultyBackend(new HostBackend(), { stuckStream: (label) => label === 'stuck' });
  const stream = unwrap(backend.createStream(Device.cuda(0), { label: 'stuck' }));
  const event = unwrap(backend.createEvent(Device.cuda(0)));
  unwrap(backend.recordEvent(event, stream));
  return { backend, stream, event };
}

describe('FaultyBackend host waits on stuck work', () => {
  it('stay pending, then reject with InvalidState (an HsError) when the backend is disposed', async () => {
    const { backend, stream, event } = stuck();
    let settled = false;
    const onStream = backend.synchronizeStream(stream).finally(() => (settled = true));
    const onEvent = backend.synchronizeEvent(event);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    expect(backend.pendingHostWaits).toBe(2);
    backend.dispose();
    const disposed = { name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('disposed while a host wait was pending on stuck work') };
    await expect(onStream).rejects.toMatchObject(disposed);
    await expect(onEvent).rejects.toMatchObject(disposed);
    expect(backend.pendingHostWaits).toBe(0);
  });

  it('continue on the inner backend after unstick(): they resolve, or reject with its HsError (DeviceError) when the work faulted', async () => {
    const { backend, stream, event } = stuck();
    const onEvent = backend.synchronizeEvent(event);
    unwrap(
      backend.launchHostFunc(stream, () => {
        throw new Error('planted failure on the stuck stream');
      }),
    );
    const onStream = backend.synchronizeStream(stream);
    backend.unstick();
    await expect(onEvent).resolves.toBeUndefined();
    await expect(onStream).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.DeviceError, message: expect.stringContaining('planted failure on the stuck stream') });
    backend.dispose();
  });
});
