/**
 * Vector clocks as plain number arrays: entry `i` counts the accesses of clock owner `i` (index 0 is the
 * host thread, streams follow) that the owner of the clock is ordered after. Missing entries are 0.
 */

/** Raises each entry of `target` to at least the matching entry of `source`; true when anything changed. */
export function joinClock(target: number[], source: readonly number[]): boolean {
  let changed = false;
  for (let i = 0; i < source.length; i++) {
    const v = source[i] as number;
    if (i >= target.length) {
      while (target.length < i) target.push(0);
      target.push(v);
      changed ||= v !== 0;
    } else if (v > (target[i] as number)) {
      target[i] = v;
      changed = true;
    }
  }
  return changed;
}

/** Overwrites `target` with `source` (reusing `target`'s storage). */
export function copyClock(target: number[], source: readonly number[]): void {
  target.length = source.length;
  for (let i = 0; i < source.length; i++) target[i] = source[i] as number;
}

/** True when a clock is ordered after access number `epoch` of owner `owner`. */
export function clockCovers(clock: readonly number[], owner: number, epoch: number): boolean {
  return (clock[owner] ?? 0) >= epoch;
}

/** Lowers each entry of `floor` to at most the matching entry of `clock` (entries missing in `clock` count 0). */
export function meetClock(floor: number[], clock: readonly number[]): void {
  for (let i = 0; i < floor.length; i++) {
    const v = clock[i] ?? 0;
    if (v < (floor[i] as number)) floor[i] = v;
  }
}
