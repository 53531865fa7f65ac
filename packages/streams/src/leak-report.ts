/** What a registered owner leaves behind for its leak report. It must not reference the owner itself. */
export interface LeakRecord {
  /** Names the owner in the warning (a pool name, a grid name, a byte size). */
  readonly label: string;
  /**
   * Releases the owner's memory once it was collected undisposed, or leaves it (omitted) where no release is
   * safe; a thrown error is caught and added to the warning.
   */
  readonly release?: () => void;
}

/** Registers and unregisters the owners of one class. */
export interface LeakTracker {
  /** Starts watching `owner`; `token` (an object the owner keeps) unregisters it. */
  track(owner: object, record: LeakRecord, token: object): void;
  /** Stops watching the owner registered with `token` (its `dispose()`); a second call does nothing. */
  untrack(token: object): void;
}

interface Held {
  readonly className: string;
  readonly label: string;
  readonly stack: string | undefined;
  readonly release: (() => void) | undefined;
}

interface ClassReport {
  total: number;
  pending: Held[];
  failures: string[];
  warned: boolean;
}

/** Labels (and stacks) quoted in one warning at most. */
const QUOTED = 8;

const reports = new Map<string, ClassReport>();
let flushScheduled = false;

const registry = new FinalizationRegistry<Held>((held) => {
  const report = reports.get(held.className) as ClassReport;
  report.total += 1;
  if (held.release !== undefined) {
    try {
      held.release();
    } catch (thrown) {
      report.failures.push(thrown instanceof Error ? thrown.message : String(thrown));
    }
  }
  if (report.pending.length < QUOTED) report.pending.push(held);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushWarnings).unref();
  }
});

/** Emits the pending warnings: one per owner class that has not warned yet, with its count so far. */
function flushWarnings(): void {
  flushScheduled = false;
  const silenced = process.env.HS_LEAK_REPORT === '0';
  for (const [className, report] of reports) {
    if (report.pending.length === 0) continue;
    if (!report.warned && !silenced) {
      report.warned = true;
      const labels = report.pending.map((h) => h.label).join(', ');
      const stacks = report.pending.flatMap((h) => (h.stack === undefined ? [] : [`\n  created at: ${h.stack}`])).join('');
      const failures = report.failures.length === 0 ? '' : `; releasing failed: ${report.failures.join('; ')}`;
      process.emitWarning(
        `${report.total} ${className} object(s) were garbage-collected without dispose() (${labels}${report.total > report.pending.length ? ', ...' : ''})${failures}. ` +
          `Call dispose() (or \`using\`) when done; set HS_LEAK_STACKS=1 for creation stacks, HS_LEAK_REPORT=0 to silence (later leaks of this class are only counted: leakCounts()).${stacks}`,
        { code: 'HS_LEAK' },
      );
    }
    report.pending.length = 0;
    report.failures.length = 0;
  }
}

/**
 * The safety net of hs's explicit lifetimes (ARCHITECTURE, hot-path rule 4): an owner of memory registers
 * itself when it is made and unregisters in `dispose()`; one that the garbage collector reclaims while still
 * registered is a leak. Each leak is counted per owner class, its memory is released where that is safe
 * (the owner's `release`, run after collection: a stream-ordered free on its retained stream, never a
 * synchronous device free and never a slot a release stream may still read), and one warning per owner class
 * (`process.emitWarning`, code `HS_LEAK`) says how many and which (labels; creation stacks with
 * `HS_LEAK_STACKS=1`). `HS_LEAK_REPORT=0` silences the warnings (counts and releases go on).
 *
 * Returns a tracker of owner class `className`; every tracker of one class shares its count and warning.
 * @example
 * ```ts
 * import { leakCounts, leakTracker } from '@hs/streams';
 *
 * const leaks = leakTracker('FrameBuffer');
 *
 * class FrameBuffer {
 *   readonly bytes: Uint8Array;
 *   readonly #token = {};
 *   constructor(byteSize: number) {
 *     this.bytes = new Uint8Array(byteSize);
 *     // The record must not reference the owner: it outlives it. A release could free memory on a retained stream.
 *     leaks.track(this, { label: `frame buffer ${byteSize} B` }, this.#token);
 *   }
 *   dispose(): void {
 *     leaks.untrack(this.#token);
 *   }
 * }
 *
 * const frame = new FrameBuffer(4096);
 * frame.dispose();
 * console.log(leakCounts()); // { FrameBuffer: 0, ... } until an undisposed FrameBuffer is collected
 * ```
 */
export function leakTracker(className: string): LeakTracker {
  if (!reports.has(className)) reports.set(className, { total: 0, pending: [], failures: [], warned: false });
  return {
    track(owner, record, token) {
      const stack = process.env.HS_LEAK_STACKS === '1' ? new Error().stack?.split('\n').slice(2).join('\n') : undefined;
      registry.register(owner, { className, label: record.label, stack, release: record.release }, token);
    },
    untrack(token) {
      registry.unregister(token);
    },
  };
}

/**
 * Owners collected without `dispose()` so far, per owner class (every class that has a tracker).
 * @example
 * ```ts
 * import { leakCounts, leakTracker } from '@hs/streams';
 *
 * const leaks = leakTracker('StagingBuffer');
 * const buffer = { bytes: new Uint8Array(1024) };
 * const token = {};
 * leaks.track(buffer, { label: 'staging buffer 1024 B' }, token);
 * leaks.untrack(token); // what dispose() does: a disposed owner is never counted
 * console.log(`StagingBuffer leaks so far: ${leakCounts()['StagingBuffer']}`);
 * ```
 */
export function leakCounts(): Readonly<Record<string, number>> {
  return Object.fromEntries([...reports].map(([className, report]) => [className, report.total]));
}
