import { FRAME_BYTES } from './wire/frame-layout.js';

/**
 * Cuts a socket's byte stream into `FRAME_BYTES` frames. Each frame is staged in one reused buffer (a
 * 256-byte copy of the frame, never of tensor payload) and handed to `onFrame` with a DataView over it;
 * `onFrame` returns false to stop reading (the connection is being dropped).
 */
export class FrameReader {
  readonly #staging = Buffer.alloc(FRAME_BYTES);
  readonly #view = new DataView(this.#staging.buffer, this.#staging.byteOffset, FRAME_BYTES);
  #filled = 0;
  #stopped = false;

  constructor(private readonly onFrame: (view: DataView) => boolean) {}

  /** Feeds one chunk from the socket. */
  push(chunk: Buffer): void {
    let at = 0;
    while (!this.#stopped && at < chunk.length) {
      const n = Math.min(FRAME_BYTES - this.#filled, chunk.length - at);
      chunk.copy(this.#staging, this.#filled, at, at + n);
      this.#filled += n;
      at += n;
      if (this.#filled === FRAME_BYTES) {
        this.#filled = 0;
        if (!this.onFrame(this.#view)) this.#stopped = true;
      }
    }
  }
}
