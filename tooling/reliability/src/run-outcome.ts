import { HsError, type Result, ok } from '@hs/streams';

/**
 * A promise of hs (a run, a topic setup) as the `Result` the scenarios compare: `ok(value)` when it
 * resolved, the `HsError` it rejected with otherwise. Anything else it rejects with is a bug of the code
 * under test and rejects the returned promise, so a scenario reports it instead of miscounting it.
 */
export function outcomeOf<T>(promise: Promise<T>): Promise<Result<T>> {
  return promise.then(
    (value) => ok(value),
    (thrown: unknown) => {
      if (thrown instanceof HsError) return { ok: false as const, error: thrown };
      throw thrown;
    },
  );
}
