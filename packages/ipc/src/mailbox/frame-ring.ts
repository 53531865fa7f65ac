import type { DoorbellBinding } from '../ipc-native.js';
import { FRAME_BYTES } from '../wire/frame-layout.js';
import { RingWord } from './mailbox-layout.js';

/** What `FrameRing.drain` did. */
export const enum DrainOutcome {
  /** Every published entry was handed out. */
  Drained = 0,
  /** The frame handler asked to stop (the connection is being dropped). */
  Stopped = 1,
  /** The writer's tail is further ahead than the ring holds: the peer corrupted the control block. */
  Corrupt = 2,
}

const TAIL = RingWord.tail / 4;
const HEAD = RingWord.head / 4;
const PARKED = RingWord.parked / 4;
const FRAME_WORDS = FRAME_BYTES / 4;

/**
 * One direction of a topic mailbox: a single-producer single-consumer ring of `FRAME_BYTES` entries in
 * shared memory. The writer copies a frame into the next entry and commits the tail through the addon
 * (a sequentially consistent store, then a look at `parked`: a sleeping reader is woken through its
 * doorbell, a busy one costs no system call). The reader copies each entry into private memory before
 * handing it out, so the peer cannot change a frame between its validation and its use, and trusts none
 * of the peer's counters: its own position is kept here, the peer's is checked against the capacity.
 */
export class FrameRing {
  readonly #native: DoorbellBinding;
  readonly #bytes: Uint8Array;
  /** The same mapping as 32-bit words, for copying entries out without allocating a view per frame. */
  readonly #words: Uint32Array;
  readonly #control: Uint32Array;
  readonly #controlOffset: number;
  readonly #entries: number;
  readonly #capacity: number;
  /** The writer's tail or the reader's head, kept privately (the shared copy is the peer's to read). */
  #position = 0;

  constructor(native: DoorbellBinding, bytes: Uint8Array, controlOffset: number, entriesOffset: number, capacity: number) {
    this.#native = native;
    this.#bytes = bytes;
    this.#words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
    this.#control = new Uint32Array(bytes.buffer, bytes.byteOffset + controlOffset, RingWord.parked / 4 + 1);
    this.#controlOffset = bytes.byteOffset + controlOffset;
    this.#entries = entriesOffset;
    this.#capacity = capacity;
  }

  /**
   * Writer: copies `frame` (`FRAME_BYTES` bytes) into the next entry and commits it, ringing
   * `doorbellFd` when the reader is parked. Returns false, and writes nothing, when the ring is full.
   */
  push(frame: Uint8Array, doorbellFd: number): boolean {
    const head = Atomics.load(this.#control, HEAD);
    if ((this.#position - head) >>> 0 >= this.#capacity) return false;
    this.#bytes.set(frame, this.#entries + (this.#position & (this.#capacity - 1)) * FRAME_BYTES);
    this.#position = (this.#position + 1) >>> 0;
    this.#native.commitRing(this.#bytes.buffer as ArrayBuffer, this.#controlOffset, this.#position, doorbellFd);
    return true;
  }

  /**
   * Reader: hands every committed entry to `onFrame`, each first copied into `staging` (64 words, viewed
   * by `view`); `onFrame` returns false to stop. Publishes the new head once at the end.
   */
  drain(staging: Uint32Array, view: DataView, onFrame: (view: DataView) => boolean): DrainOutcome {
    const tail = Atomics.load(this.#control, TAIL);
    if ((tail - this.#position) >>> 0 > this.#capacity) return DrainOutcome.Corrupt;
    let outcome = DrainOutcome.Drained;
    while (this.#position !== tail) {
      const at = (this.#entries + (this.#position & (this.#capacity - 1)) * FRAME_BYTES) >>> 2;
      for (let i = 0; i < FRAME_WORDS; i++) staging[i] = this.#words[at + i] as number;
      this.#position = (this.#position + 1) >>> 0;
      if (!onFrame(view)) {
        outcome = DrainOutcome.Stopped;
        break;
      }
    }
    // The handler may have closed the mailbox (a detached mapping has no words left to store into).
    if (this.#control.length !== 0) Atomics.store(this.#control, HEAD, this.#position);
    return outcome;
  }

  /**
   * Reader: frames readable now without waiting (the writer's tail minus this reader's head). A tail
   * beyond the capacity (a corrupted control block) counts as pending too, so that `drain` reports it.
   */
  pending(): number {
    return (Atomics.load(this.#control, TAIL) - this.#position) >>> 0;
  }

  /**
   * Reader: marks itself awake (a spinning reader polls the ring, so commits need not ring its doorbell).
   * Only an optimisation: `park` is what makes sleeping safe, and a writer that still saw the reader parked
   * rings once more (a spurious wake-up drains nothing).
   */
  unpark(): void {
    if (this.#control.length !== 0) Atomics.store(this.#control, PARKED, 0);
  }

  /** Reader: marks itself asleep; true when nothing is left to drain (else drain again before sleeping). */
  park(): boolean {
    return this.#native.parkRing(this.#bytes.buffer as ArrayBuffer, this.#controlOffset) === this.#position;
  }
}
