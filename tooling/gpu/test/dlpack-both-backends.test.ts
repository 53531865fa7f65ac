import { TensorPool } from '@hs/pool';
import { CudaBackend, Device, HostBackend, MemoryKind, unwrap, type Backend } from '@hs/streams';
import { DType, exportDLPack, importDLPack } from '@hs/tensor';
import { describe, expect, it } from 'vitest';

const backends: [string, () => Backend][] = [['HostBackend', () => new HostBackend()]];
if (CudaBackend.available()) backends.push(['CudaBackend', () => unwrap(CudaBackend.create())]);
else console.log('DLPack on CudaBackend skipped: no CUDA device or @hs/cuda-native not built');

for (const [name, make] of backends) {
  describe(`DLPack with a pool tensor on ${name}`, () => {
    it('exports a published tensor, keeps its slot leased until the deleter runs, and imports it read-only', async () => {
      const backend = make();
      try {
        const device = backend.devices[0] as Device;
        const producer = unwrap(backend.createStream(device, { label: 'producer' }));
        const consumer = unwrap(backend.createStream(device, { label: 'consumer' }));
        const pool = unwrap(
          TensorPool.materialize(backend, { name: 'frames', memoryKind: MemoryKind.CudaDevice, device, slotCount: 2, slotByteSpan: 1024, maxRank: 2, dtype: DType.uint8, producerStream: producer }),
        );
        const loan = unwrap(pool.allocateTensor({ shape: [16, 64], dtype: DType.uint8 }));
        const guard = unwrap(loan.write(producer));
        unwrap(backend.memsetAsync(producer, guard.range, 0x33));
        unwrap(guard.commit());
        const tensor = unwrap(loan.emit());

        const exported = unwrap(exportDLPack(tensor, { releaseStream: consumer }));
        expect(exported.flags & 1).toBe(1);
        const imported = unwrap(importDLPack(exported, { backend, memory: tensor.memory, name: 'frame via DLPack' }));
        expect(imported.readOnly).toBe(true);
        expect(imported.byteOffset).toBe(tensor.byteOffset);
        // The consumer orders itself after the producer through the exporter's readiness event.
        unwrap(backend.streamWaitEvent(consumer, tensor.readinessEvent!));
        const seen = new Uint8Array(imported.byteSize);
        unwrap(backend.copyToHostAsync(consumer, seen, imported.data()));
        await backend.synchronizeStream(consumer);
        expect(seen.every((b) => b === 0x33)).toBe(true);

        // Published and leased by the export: the slot stays out of reuse until the deleter runs.
        expect(pool.retire()).toBe(0);
        imported.dispose(); // runs the export's deleter once
        await backend.synchronizeStream(consumer);
        expect(pool.retire()).toBe(1);
        pool.dispose();
      } finally {
        backend.dispose();
      }
    });
  });
}
