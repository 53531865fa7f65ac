import { ErrorCode, OK_VOID, err, type Result } from '@hs/streams';
import type { Tensor } from '@hs/tensor';

/**
 * One received tensor, held until `release()`. The tensor is read-only and lives in the publisher's shared
 * segment (zero copy); after `release()` (or the channel closing) it turns stale and its accessors report
 * `InvalidState`. Each slot reuses one lease object, so do not keep it past `release()`.
 *
 * The publisher may reclaim the slot first: it drops a subscriber that held a lease past its
 * `leaseTimeoutMs` (GOODBYE lease timeout) or broke the protocol, and any connection that ends without a
 * GOODBYE closed (its crash, or a drop) ends this process's claim too. From then on the slot can be
 * rewritten, so the tensor's accessors return `InvalidState` naming the topic, the slot and why
 * (`hostView()`; `copyToHost()` and `synchronizeForHost()` reject with it), `reclaimed` is true and
 * `release()` returns ok without sending anything. A view taken from the tensor BEFORE the reclaim (a
 * `Uint8Array` from `hostView()`) is not protected: it still reads the segment, whose bytes may change
 * under it. Copy what must outlive the lease.
 * Spec: "Crossing process boundaries: the generation fence" (an importer's claim on an exporter slot).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 * import { ChannelRuntime, TopicPublisher, ipcAvailability } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
 *   const backend = new HostBackend();
 *   const pub = await TopicPublisher.create({ backend, topic: 'scan', memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 16, maxRank: 1, runtimeDirectory });
 *   const channel = await ChannelRuntime.connect({ backend, topic: 'scan', runtimeDirectory });
 *   while (pub.subscriberCount === 0) await new Promise((resolve) => setTimeout(resolve, 1));
 *   const loan = unwrap(pub.pool.allocateTensor({ shape: [16], dtype: DType.uint8 }));
 *   const guard = unwrap(loan.write(null));
 *   unwrap(guard.tensor.mutableHostView()).set([3, 1, 4, 1, 5]);
 *   unwrap(guard.commit());
 *   unwrap(pub.publish(unwrap(loan.emit())));
 *
 *   const lease = await channel.receive();
 *   const kept = Uint8Array.from(unwrap(lease.tensor.hostView()).subarray(0, 5)); // copy what must outlive the lease
 *   console.log(`slot ${lease.slot}, generation ${lease.generation}, held ${lease.held}: kept ${kept.join(',')}`);
 *   unwrap(lease.release()); // the slot goes back to the publisher; the tensor turns stale
 *   const stale = lease.tensor.hostView();
 *   if (!stale.ok) console.log(stale.error.message);
 *   const twice = lease.release();
 *   if (!twice.ok) console.log(twice.error.message);
 *   channel.close();
 *   await pub.close();
 *   rmSync(runtimeDirectory, { recursive: true, force: true });
 * }
 * ```
 */
export class TopicLease {
  #generation = 0;
  #held = false;
  #reclaimed = false;

  /** @internal Made by `ChannelRuntime`, one per slot; `onRelease` sends the RELEASE frame. */
  constructor(
    private readonly onRelease: (slot: number, generation: number) => void,
    /** Slot index in the publisher's boundary pool. */
    readonly slot: number,
    /** The read-only tensor over the slot. */
    readonly tensor: Tensor,
  ) {}

  /** Publication count of the slot this lease carries. */
  get generation(): number {
    return this.#generation;
  }

  /** True until `release()` or the channel closes. */
  get held(): boolean {
    return this.#held;
  }

  /** True once the publisher reclaimed the slot while this lease held it (see the class note). */
  get reclaimed(): boolean {
    return this.#reclaimed;
  }

  /** @internal For the channel: the lease now carries `generation`. */
  hold(generation: number): void {
    this.#generation = generation;
    this.#held = true;
    this.#reclaimed = false;
  }

  /** @internal For the channel: the publisher reclaimed the slot; `release()` is a no-op from now on. */
  reclaim(): void {
    this.#held = false;
    this.#reclaimed = true;
  }

  /** @internal For the channel: the lease ends without a release frame (the channel closed). */
  drop(): void {
    this.#held = false;
  }

  /**
   * Returns the slot to the publisher (a RELEASE frame); the tensor turns stale. Ok and nothing sent when
   * the publisher already reclaimed it (`reclaimed`); `InvalidState` when the lease was already released
   * or its channel closed.
   */
  release(): Result<void> {
    if (this.#reclaimed) return OK_VOID;
    if (!this.#held) return err(ErrorCode.InvalidState, `lease of slot ${this.slot} generation ${this.#generation} was already released (or its channel closed)`);
    this.#held = false;
    this.onRelease(this.slot, this.#generation);
    return OK_VOID;
  }
}
