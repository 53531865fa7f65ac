import { HsError } from '@hs/streams';

/**
 * The `HsError` `promise` rejects with; throws (failing the test) when it resolves instead or rejects
 * with anything that is not an `HsError`.
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<HsError> {
  let value: unknown;
  try {
    value = await promise;
  } catch (thrown) {
    if (thrown instanceof HsError) return thrown;
    throw new Error(`the promise rejected with ${String(thrown)}, not an HsError`, { cause: thrown });
  }
  throw new Error(`the promise resolved (${JSON.stringify(value)?.slice(0, 200)}); it should have rejected with an HsError`);
}
