import { ErrorCode, err, ok, type Ok, type Result } from '@hs/streams';

/**
 * A host buffer allocated once, handed out as a view of exactly the bytes one frame needs. The view is
 * rebuilt only when the frame size changes, so frames of one size allocate nothing.
 */
export class StagingBuffer {
  private readonly bytes: Uint8Array;
  private current: Ok<Uint8Array>;

  /** @param capacity bytes; the largest frame this buffer stages. */
  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
    this.current = ok(this.bytes.subarray(0, 0));
  }

  /**
   * A view of the first `byteLength` bytes. Valid until the next call with another length.
   * @returns `ErrorCode.ResourceExhausted` when `byteLength` exceeds the capacity.
   */
  view(byteLength: number, owner: string): Result<Uint8Array> {
    if (byteLength === this.current.value.byteLength) return this.current;
    if (byteLength > this.bytes.byteLength) {
      return err(ErrorCode.ResourceExhausted, `${owner}: a ${byteLength}-byte frame exceeds the ${this.bytes.byteLength}-byte staging buffer`);
    }
    this.current = ok(this.bytes.subarray(0, byteLength));
    return this.current;
  }
}
