import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterEach, describe, expect, it } from 'vitest';
import { TensorPool, type TensorPoolSpec } from '../src/index.js';

const code = <T>(r: Result<T>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);
const message = <T>(r: Result<T>): string => (r.ok ? '' : r.error.message);

/** A pool output's declared representation rank is exact; `maxRank` is only the storage bound. */
describe('TensorPool rank', () => {
  const backends: HostBackend[] = [];
  const make = (spec: Partial<TensorPoolSpec>): TensorPool => {
    const backend = new HostBackend({ scheduling: 'manual' });
    backends.push(backend);
    return unwrap(
      TensorPool.materialize(backend, {
        name: 'pool:cam.frame',
        memoryKind: MemoryKind.Host,
        device: Device.cpu(),
        slotCount: 1,
        slotByteSpan: 256,
        maxRank: 2,
        producerStream: null,
        ...spec,
      }),
    );
  };
  afterEach(() => {
    for (const b of backends.splice(0)) b.dispose();
  });

  it('refuses a request whose rank differs from the declared rank, naming pool, declared and requested rank', () => {
    const pool = make({ rank: 2 });
    const lower = pool.allocateTensor({ shape: [64], dtype: DType.uint8 });
    expect(code(lower)).toBe(ErrorCode.InvalidArgument);
    expect(message(lower)).toMatch(/pool "pool:cam\.frame": shape has rank 1, but the output is declared with rank 2/);
    expect(code(pool.allocateTensor({ shape: [], dtype: DType.uint8 }))).toBe(ErrorCode.InvalidArgument);
    // The refusal kept no slot: the one slot is still free for a rank-2 request.
    const loan = unwrap(pool.allocateTensor({ shape: [8, 8], dtype: DType.uint8 }));
    expect(unwrap(loan.write(null)).tensor.shape).toEqual([8, 8]);
  });

  it('keeps maxRank as the storage bound: a declared rank below it is still exact', () => {
    const pool = make({ rank: 1, maxRank: 3 });
    expect(message(pool.allocateTensor({ shape: [2, 2], dtype: DType.uint8 }))).toMatch(/rank 2, but the output is declared with rank 1/);
    unwrap(pool.allocateTensor({ shape: [4], dtype: DType.uint8 }));
  });

  it('without a declared rank accepts any rank up to maxRank', () => {
    const pool = make({});
    expect(pool.allocateTensor({ shape: [4], dtype: DType.uint8 }).ok).toBe(true);
    const other = make({});
    expect(other.allocateTensor({ shape: [2, 2], dtype: DType.uint8 }).ok).toBe(true);
    expect(code(make({}).allocateTensor({ shape: [2, 2, 2], dtype: DType.uint8 }))).toBe(ErrorCode.InvalidArgument);
  });
});
