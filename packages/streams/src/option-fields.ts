import { ErrorCode, OK_VOID, err, type Result } from './errors.js';

/** Edits (insert, delete, substitute) that turn `a` into `b`, compared case-insensitively; gives up above `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > limit) return limit + 1;
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitute = (previous[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1);
      current.push(Math.min(substitute, (previous[j] as number) + 1, (current[j - 1] as number) + 1));
    }
    previous = current;
  }
  return previous[y.length] as number;
}

/**
 * Checks that an options object holds only the fields its function documents, so a misspelt option is an
 * error instead of a silently applied default. Called once where options are taken (never on a hot path).
 * @param who - what takes the options, as the message should name it (`'HostBackend'`, `'RunSession.create'`).
 * @param options - the options object as given (`undefined` passes).
 * @param known - every field the options type declares.
 * @returns OK, or InvalidArgument naming the first unknown field, the closest known one when a field is at most
 *   two edits from it (`did you mean 'seed'?`), and every known field; InvalidArgument when `options` is not an object
 *   (`null`, a number, a string).
 * @example
 * ```ts
 * import { checkOptionFields } from '@hs/streams';
 *
 * const checked = checkOptionFields('MyOperator', { rateHz: 30, qeueDepth: 4 }, ['rateHz', 'queueDepth']);
 * if (!checked.ok) console.log(checked.error.detail); // MyOperator: unknown option 'qeueDepth'; did you mean 'queueDepth'? ...
 * ```
 */
export function checkOptionFields(who: string, options: object | undefined, known: readonly string[]): Result<void> {
  if (options === undefined) return OK_VOID;
  if (typeof options !== 'object' || options === null) return err(ErrorCode.InvalidArgument, `${who}: options must be an object, not ${options === null ? 'null' : `a ${typeof options}`}`);
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    let closest: string | undefined;
    let best = 3;
    for (const field of known) {
      const d = editDistance(key, field, 2);
      if (d < best) {
        best = d;
        closest = field;
      }
    }
    const hint = closest === undefined ? '' : ` did you mean '${closest}'?`;
    return err(ErrorCode.InvalidArgument, `${who}: unknown option '${key}';${hint} the options are ${known.join(', ')}`);
  }
  return OK_VOID;
}
