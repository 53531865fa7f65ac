import { ErrorCode, HsError, OK_VOID, err, type Backend, type Err, type Result, type Stream } from '@hs/streams';
import type { TensorBacking } from './tensor-backing.js';

/**
 * The reference count behind an imported (DLPack) tensor: the importer's own reference, dropped by
 * `Tensor.dispose()`, plus one per read lease (a channel, a consumer, an export). When the last holder
 * drops and every stream a lease was released on has passed that point (a non-blocking host function
 * enqueued there, never a host wait), `onLastDrop` runs once: the tensor then destroys its readiness
 * event, turns stale and runs the DLPack deleter. Release streams are accepted without a cap: each
 * release enqueues its own host function, so nothing is preallocated per stream.
 * Spec: "Foreign tensors imported through DLPack" (the deleter runs when the last reference drops).
 */
export class ImportBacking implements TensorBacking {
  readonly #backend: Backend;
  readonly #name: string;
  readonly #onLastDrop: () => void;
  readonly #ended: Err;
  #owned = true;
  #leases = 0;
  /** Host functions enqueued on release streams that have not run yet. */
  #pendingStreams = 0;
  #done = false;
  /** One callback for every release stream, made once. */
  readonly #streamPassed = (): void => {
    this.#pendingStreams--;
    this.#maybeEnd();
  };

  constructor(backend: Backend, name: string, onLastDrop: () => void) {
    this.#backend = backend;
    this.#name = name;
    this.#onLastDrop = onLastDrop;
    this.#ended = err(ErrorCode.InvalidState, `imported tensor "${name}" was released by its last holder; import it again`);
  }

  /** Accepts any stream (see the class note); `InvalidState` once the last holder dropped. */
  registerReleaseStream(): Result<void> {
    if (this.#done || (!this.#owned && this.#leases === 0)) return this.#ended;
    return OK_VOID;
  }

  acquireLease(): Result<void> {
    if (this.#done || (!this.#owned && this.#leases === 0)) return this.#ended;
    this.#leases++;
    return OK_VOID;
  }

  releaseLease(releaseStream: Stream | null): void {
    if (this.#leases === 0) {
      throw new HsError(ErrorCode.InvalidState, `imported tensor "${this.#name}": releaseLease without a held lease; release each lease exactly once`);
    }
    if (releaseStream !== null) {
      const enqueued = this.#backend.launchHostFunc(releaseStream, this.#streamPassed, { blocking: false });
      if (!enqueued.ok) throw enqueued.error;
      this.#pendingStreams++;
    }
    this.#leases--;
    this.#maybeEnd();
  }

  /** Drops the importer's own reference (`Tensor.dispose()`); idempotent. */
  drop(): void {
    if (!this.#owned) return;
    this.#owned = false;
    this.#maybeEnd();
  }

  #maybeEnd(): void {
    if (this.#done || this.#owned || this.#leases > 0 || this.#pendingStreams > 0) return;
    this.#done = true;
    this.#onLastDrop();
  }
}
