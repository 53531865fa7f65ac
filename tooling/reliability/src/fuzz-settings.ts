import fc from 'fast-check';

/**
 * The seed every fuzz target uses unless `HS_FUZZ_SEED` names another (an integer): CI runs are
 * reproducible, and a failure prints the seed and path to replay it.
 */
export const FUZZ_SEED = seedFromEnvironment(process.env.HS_FUZZ_SEED);

/** What one fuzz target did. */
export interface FuzzOutcome {
  readonly name: string;
  /** Inputs generated and checked. */
  readonly runs: number;
  readonly seed: number;
  /** The shrunk counterexample and its error, or null when every input held. */
  readonly failure: string | null;
  /** What the inputs exercised (for example how many were accepted and refused). */
  readonly detail: string;
}

function seedFromEnvironment(value: string | undefined): number {
  if (value === undefined || value === '') return 20261130;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) throw new Error(`HS_FUZZ_SEED must be an integer, got "${value}"`);
  return seed;
}

/**
 * Inputs per fuzz target: `HS_FUZZ_RUNS` (a positive integer) for long runs on demand, otherwise
 * `ciDefault`, sized so the whole suite stays within seconds on a 2-core CI machine.
 */
export function fuzzRuns(ciDefault: number): number {
  const value = process.env.HS_FUZZ_RUNS;
  if (value === undefined || value === '') return ciDefault;
  const runs = Number(value);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`HS_FUZZ_RUNS must be a positive integer, got "${value}"`);
  return runs;
}

/**
 * Checks `property` on `runs` inputs from `seed`; returns the outcome instead of throwing. `detail` is
 * called once afterwards to describe what the inputs exercised.
 */
export function checkProperty<T>(name: string, property: fc.IProperty<T>, runs: number, seed: number, detail: () => string): FuzzOutcome {
  const details = fc.check(property, { numRuns: runs, seed });
  const failure = details.failed
    ? `seed ${seed}, path "${details.counterexamplePath ?? ''}": ${fc.stringify(details.counterexample)}: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`
    : null;
  return { name, runs: details.numRuns, seed, failure, detail: detail() };
}
