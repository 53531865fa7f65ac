import { ErrorCode, HsError, err, type Result, type Stream } from '@hs/streams';
import { requestProblem } from '../allocation-checks.js';
import type { MemoryBlock, SyncResource } from '../resource.js';
import { ResourceAdaptor } from './resource-adaptor.js';

/**
 * When a `FaultyResource` injects a fault. Exactly one of `failAt` and `probability` is given.
 * Allocation requests are numbered from 1 in call order (both tiers; 0-byte requests count too).
 */
export interface FaultyResourceOptions {
  /**
   * Fails request number `failAt` (a positive safe integer), and with `repeat: true` every request
   * from that one on.
   */
  readonly failAt?: number;
  /** With `failAt`: keep failing every request from `failAt` on (a resource that has run dry). Default false. */
  readonly repeat?: boolean;
  /** Fails each request with this probability (0..1), drawn from a generator seeded with `seed`. */
  readonly probability?: number;
  /** Seed of the generator for `probability` (any finite number); the same seed gives the same faults. Default 1. */
  readonly seed?: number;
}

/** xorshift32 step: a small deterministic generator, so a fault schedule reproduces from its seed. */
function nextState(state: number): number {
  let x = state;
  x ^= x << 13;
  x >>>= 0;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

/**
 * A fault-injection adaptor for reliability tests: it fails chosen allocation requests with
 * `ErrorCode.OutOfMemory` (an "injected fault" message naming the request number) before they reach the
 * upstream, so nothing is allocated for them; every other request and every deallocation passes through
 * unchanged. The fault schedule is either the Nth request (`failAt`, optionally `repeat`) or a seeded
 * random draw (`probability`, `seed`), reproducible from its options. Keeps the upstream's tier.
 * Spec: the conformance suite's impossible-size case (nanovdb-memory-resources): a refused allocation
 * returns OutOfMemory and allocates nothing — this adaptor makes that path happen on demand.
 *
 * @example
 * ```ts
 * import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
 * import { FaultyResource, HostResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // a reliability test: the third allocation fails with OutOfMemory, nothing allocated for it
 * const faulty = new FaultyResource(new HostResource(backend), { failAt: 3 });
 * const buffers = [unwrap(ResourceBuffer.allocate(backend, faulty, 64)), unwrap(ResourceBuffer.allocate(backend, faulty, 64))];
 * const third = ResourceBuffer.allocate(backend, faulty, 64);
 * if (!third.ok && third.error.code === ErrorCode.OutOfMemory) console.log(third.error.message); // "... injected fault at allocation 3 ..."
 * console.log(`requests ${faulty.requests}, faults ${faulty.faultsInjected}`);
 * for (const b of buffers) b.dispose();
 * ```
 */
export class FaultyResource<R extends SyncResource> extends ResourceAdaptor<R> {
  readonly #failAt: number;
  readonly #repeat: boolean;
  readonly #probability: number;
  #state: number;
  #requests = 0;
  #faults = 0;

  /**
   * @throws HsError InvalidArgument when `upstream` is not a resource, when neither or both of `failAt`
   *   and `probability` are given, `failAt` is not a positive safe integer, `probability` is outside 0..1,
   *   `seed` is not finite or `repeat` is not a boolean.
   */
  constructor(upstream: R, options: FaultyResourceOptions) {
    super(upstream, 'FaultyResource');
    const { failAt, repeat = false, probability, seed = 1 } = options ?? {};
    if ((failAt === undefined) === (probability === undefined)) {
      throw new HsError(ErrorCode.InvalidArgument, 'FaultyResource: give exactly one of failAt (the Nth request) and probability (seeded random faults)');
    }
    if (failAt !== undefined && (!Number.isSafeInteger(failAt) || failAt < 1)) {
      throw new HsError(ErrorCode.InvalidArgument, `FaultyResource: failAt must be a positive safe integer, got ${String(failAt)}`);
    }
    if (probability !== undefined && (typeof probability !== 'number' || !(probability >= 0 && probability <= 1))) {
      throw new HsError(ErrorCode.InvalidArgument, `FaultyResource: probability must be a number from 0 to 1, got ${String(probability)}`);
    }
    if (typeof seed !== 'number' || !Number.isFinite(seed)) {
      throw new HsError(ErrorCode.InvalidArgument, `FaultyResource: seed must be a finite number, got ${String(seed)}`);
    }
    if (typeof repeat !== 'boolean') {
      throw new HsError(ErrorCode.InvalidArgument, `FaultyResource: repeat must be a boolean, got ${String(repeat)}`);
    }
    this.#failAt = failAt ?? 0;
    this.#repeat = repeat;
    this.#probability = probability ?? 0;
    this.#state = (Math.trunc(seed) >>> 0) || 0x9e3779b9;
  }

  /** Allocation requests seen so far (valid ones, failed or not). */
  get requests(): number {
    return this.#requests;
  }

  /** Faults injected so far. */
  get faultsInjected(): number {
    return this.#faults;
  }

  protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    const problem = requestProblem('FaultyResource.allocate', bytes, alignment);
    if (problem !== null) return problem;
    const request = ++this.#requests;
    if (this.#fails(request)) {
      this.#faults += 1;
      return err(
        ErrorCode.OutOfMemory,
        `FaultyResource: injected fault at allocation ${request} (${bytes} bytes); nothing was allocated — this adaptor is for tests, remove it to allocate normally`,
      );
    }
    return this.forwardAllocate(bytes, alignment, stream);
  }

  protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    return this.forwardDeallocate(block, bytes, alignment, stream);
  }

  #fails(request: number): boolean {
    if (this.#failAt > 0) return this.#repeat ? request >= this.#failAt : request === this.#failAt;
    this.#state = nextState(this.#state);
    return this.#state / 2 ** 32 < this.#probability;
  }
}
