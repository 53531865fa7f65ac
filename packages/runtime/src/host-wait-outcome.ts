import { ErrorCode, HsError, OK_VOID, type Result } from '@hs/streams';

/**
 * A host wait (`Backend.synchronizeEvent`/`synchronizeStream`, which reject with an `HsError`) as the
 * `Result` the scheduler and the pacer pass on: `OK_VOID` when it resolved, the error it rejected with
 * otherwise. The returned promise never rejects, so a wait nobody awaits yet cannot become an unhandled
 * rejection (a backend disposed under a pending wait rejects it with InvalidState).
 */
export function hostWaitOutcome(wait: Promise<void>): Promise<Result<void>> {
  return wait.then(
    () => OK_VOID,
    (thrown: unknown) => ({ ok: false, error: asHsError(thrown, ErrorCode.DeviceError, 'a host wait failed') }),
  );
}

/**
 * `thrown` when it is an `HsError` (by name, so a second copy of @hs/streams counts), else an `HsError`
 * with `code` and the message `<what>: <thrown's message>` wrapping it as the cause.
 */
export function asHsError(thrown: unknown, code: ErrorCode, what: string): HsError {
  if (thrown instanceof HsError || (thrown instanceof Error && thrown.name === 'HsError' && typeof (thrown as HsError).code === 'string')) return thrown as HsError;
  return new HsError(code, `${what}: ${thrown instanceof Error ? thrown.message : String(thrown)}`, { cause: thrown });
}
