import type { Result, Stream } from '@hs/streams';

/**
 * The storage behind a published tensor, seen from its readers: release-stream registration and read
 * leases. Pool slots implement it (later also ResourceBuffers and foreign imports). Storage is recycled only
 * when no read lease is held and every registered release stream's release event has completed;
 * the owner finds that by polling events, never by a host wait.
 *
 * Spec: "Two stream roles order every device tensor" (release streams), "Fanout release-stream caps".
 */
export interface TensorBacking {
  /**
   * Registers `stream` as a release (deallocation) stream: reads enqueued on it must finish before the
   * storage is reused. Registering a stream that is already registered is free and uses no capacity.
   * Returns `ResourceExhausted` when the stream would exceed the backing's cap on distinct release
   * streams (it is rejected, never serialized), `NotSupported` for a stream on another device, and
   * `InvalidState` when the storage is not currently published.
   */
  registerReleaseStream(stream: Stream): Result<void>;

  /**
   * Takes one read lease: the storage stays out of reuse until it is released. `InvalidState` when the
   * storage is not currently published.
   */
  acquireLease(): Result<void>;

  /**
   * Returns one read lease. With a stream, records that stream's release event on it first, so reuse
   * waits for the reads already enqueued there; the stream must have been registered with
   * `registerReleaseStream`. With `null` (a host reader that finished), nothing is recorded.
   * @throws HsError `InvalidState` when no lease is held or the stream was never registered
   *   (programmer errors).
   */
  releaseLease(releaseStream: Stream | null): void;
}
