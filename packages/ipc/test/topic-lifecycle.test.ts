import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap } from '@hs/streams';
import { TensorPool } from '@hs/pool';
import { DType } from '@hs/tensor';
import { ChannelRuntime, TopicPublisher, ipcAvailability } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-life-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const options = (topic: string) => ({ topic, memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 64, maxRank: 2, runtimeDirectory: dir });

describe.skipIf(!ipcAvailability().available)('topic lifecycle in one process', () => {
  it('NotFound without a publisher; AlreadyExists for a second live publisher; a stale socket is replaced', async () => {
    const backend = new HostBackend();
    await expect(ChannelRuntime.connect({ backend, topic: 'nobody', runtimeDirectory: dir, connectTimeoutMs: 500 })).rejects.toMatchObject({ code: ErrorCode.NotFound });

    writeFileSync(join(dir, 'stale.sock'), ''); // left by a crashed publisher: nobody answers
    const pub = await TopicPublisher.create({ backend, ...options('stale') });
    await expect(TopicPublisher.create({ backend, ...options('stale') })).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
    await pub.close();
    backend.dispose();
  });

  it('reaps the socket a killed publisher left (nobody listens: ECONNREFUSED) when a publisher creates the topic', async () => {
    const path = join(dir, 'killed.sock');
    // A publisher killed by SIGKILL runs no exit hook: its socket file stays, with no listener behind it.
    const script = `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
    const killed = spawnSync(process.execPath, ['-e', script], { timeout: 20_000 });
    expect(killed.signal).toBe('SIGKILL');
    expect(lstatSync(path).isSocket()).toBe(true);
    const backend = new HostBackend();
    const pub = await TopicPublisher.create({ backend, ...options('killed') });
    const channel = await ChannelRuntime.connect({ backend, topic: 'killed', runtimeDirectory: dir });
    expect(channel.producerPid).toBe(process.pid);
    channel.close();
    await pub.close();
    expect(existsSync(path)).toBe(false);
    backend.dispose();
  });

  it('twelve publishers add one process exit listener in all, and no MaxListenersExceededWarning', async () => {
    const backend = new HostBackend();
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    const before = process.listenerCount('exit');
    try {
      const pubs = await Promise.all(Array.from({ length: 12 }, (_, i) => TopicPublisher.create({ backend, ...options(`many-${i}`) })));
      expect(process.listenerCount('exit')).toBe(before + 1);
      for (const pub of pubs.slice(0, 11)) await pub.close();
      expect(process.listenerCount('exit')).toBe(before + 1); // the last publisher still needs it
      await pubs[11]!.close();
      expect(process.listenerCount('exit')).toBe(before);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      backend.dispose();
    }
  });

  it('delivers in place, refuses foreign tensors and double releases, and stales leases on close', async () => {
    const backend = new HostBackend();
    const pub = await TopicPublisher.create({ backend, ...options('life') });
    const channel = await ChannelRuntime.connect({ backend, topic: 'life', runtimeDirectory: dir });
    while (pub.subscriberCount === 0) await new Promise((resolve) => setImmediate(resolve));

    const loan = unwrap(pub.pool.allocateTensor({ shape: [4, 8], dtype: DType.uint16 }));
    const guard = unwrap(loan.write(null));
    const written = unwrap(guard.tensor.mutableHostView());
    written.fill(0x3c);
    unwrap(guard.commit());
    expect(unwrap(pub.publish(unwrap(loan.emit())))).toBe(1);

    const lease = await channel.receive();
    expect(lease.tensor.shape).toEqual([4, 8]);
    expect(lease.tensor.dtype).toBe(DType.uint16);
    expect(lease.tensor.readOnly).toBe(true);
    expect(lease.tensor.mutableData().ok).toBe(false);
    expect(await lease.tensor.synchronizeForHost()).toBeUndefined(); // host writer: nothing to wait on
    const seen = unwrap(lease.tensor.hostView());
    expect(seen.every((b) => b === 0x3c)).toBe(true);
    written[0] = 0x77; // same memory: the subscriber sees the publisher's bytes without a copy
    expect(seen[0]).toBe(0x77);
    expect(pub.occupancy).toBe(1);
    const returned = once(pub, 'slotsReturned');
    unwrap(lease.release());
    const again = lease.release();
    expect(again.ok ? null : again.error.code).toBe(ErrorCode.InvalidState);
    expect(lease.tensor.hostView().ok).toBe(false); // stale after release
    expect(await returned).toEqual([1]); // the RELEASE came back and freed the slot
    expect(pub.occupancy).toBe(0);

    const other = unwrap(TensorPool.materialize(backend, { name: 'other', memoryKind: MemoryKind.Host, device: Device.cpu(), slotCount: 1, slotByteSpan: 64, maxRank: 1, producerStream: null }));
    const foreignLoan = unwrap(other.allocateTensor({ shape: [4], dtype: DType.uint8 }));
    unwrap(unwrap(foreignLoan.write(null)).commit());
    const foreign = pub.publish(unwrap(foreignLoan.emit()));
    expect(foreign.ok ? null : foreign.error.code).toBe(ErrorCode.InvalidArgument);
    other.dispose();

    // A second receive while one is pending is refused; closing the publisher fails the pending one.
    const pending = channel.receive();
    await expect(channel.receive()).rejects.toMatchObject({ code: ErrorCode.InvalidState, message: expect.stringContaining('already pending') });
    const ended = expect(pending).rejects.toMatchObject({ code: ErrorCode.InvalidState, message: expect.stringContaining('closed the topic') });
    await pub.close();
    await ended;
    await expect(channel.receive()).rejects.toBe(channel.closedError); // the end of the channel, every time
    channel.close();
    channel.close();
    await expect(TopicPublisher.create({ backend, ...options('bad/name') })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    backend.dispose();
  });
});
