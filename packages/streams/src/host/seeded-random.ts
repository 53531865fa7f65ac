/**
 * A small deterministic pseudo-random generator (mulberry32) used by the host backend to pick which
 * runnable stream executes next, so that a seed reproduces an interleaving exactly.
 */
export class SeededRandom {
  private state: number;

  /** @param seed any finite number; only its low 32 bits matter. */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next value, uniform over the integers `0..bound-1`; `bound` must be a positive integer. */
  nextInt(bound: number): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u32 = (t ^ (t >>> 14)) >>> 0;
    return u32 % bound;
  }
}
