/**
 * Hands out a frozen `[rows, cols]` shape array, rebuilding it only when the dimensions change, so an
 * operator fed frames of one size allocates no shape per frame.
 */
export class ShapeCache {
  private shape: readonly number[] = Object.freeze([0, 0]);

  /** The shape `[rows, cols]` (elements). */
  of(rows: number, cols: number): readonly number[] {
    if (this.shape[0] !== rows || this.shape[1] !== cols) this.shape = Object.freeze([rows, cols]);
    return this.shape;
  }
}
