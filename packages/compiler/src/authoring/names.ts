import { ErrorCode, HsError } from '@hs/streams';

const NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/**
 * Checks an authoring name (graph, operator or port). Names are used in plan ids such as
 * `op.port` and `producer.port->consumer.port`, so they may hold only letters, digits, `_` and `-`
 * and must not start with `-`.
 * @throws HsError `InvalidArgument` when `name` is not a string of that form.
 */
export function assertAuthoringName(what: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new HsError(
      ErrorCode.InvalidArgument,
      `${what} name ${JSON.stringify(name)} is not valid; use a non-empty string of letters, digits, '_' and '-' ` +
        `(no dots or spaces, not starting with '-'), for example 'grayscale'`,
    );
  }
}
