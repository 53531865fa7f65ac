import type { Backend, Device, Stream } from '@hs/streams';

/**
 * What the pool conformance suite needs from a backend beyond the `Backend` contract: a way to hold a
 * stream back and to let the rest of the queued work run. The host backend does it with manual
 * scheduling; a CUDA harness can gate a stream behind a device-side flag.
 * A harness that cannot hold a stream passes `holdUnavailable` to {@link describePoolConformance}.
 */
export interface PoolConformanceHarness {
  /** Backend under test: the suite's pools, events and scratch memory are made on it. */
  readonly backend: Backend;
  /** CUDA device the suite's streams, events and cudaDevice pools use. */
  readonly device: Device;
  /** Creates a stream on `device` that `settle()` drives. */
  createStream(label: string): Stream;
  /** Work enqueued on `stream` after this call does not run until the returned function is called. */
  hold(stream: Stream): () => void;
  /** Resolves once all queued work that is not held has completed; rejects (with the backend's HsError) when a wait fails. */
  settle(): Promise<void>;
  /** Ordering-checker violations seen so far (0 where the backend has no checker); the suite expects 0. */
  orderingViolations(): number;
  /** Releases the backend. */
  dispose(): void;
}
