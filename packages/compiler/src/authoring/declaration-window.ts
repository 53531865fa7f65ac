import { ErrorCode, HsError } from '@hs/streams';

/**
 * The span during which an operator may declare ports: open while `Graph.add()` runs the operator's
 * `setup()`, closed for good afterwards, so a declaration can never change after the graph saw it.
 */
export class DeclarationWindow {
  #open = true;

  constructor(private readonly operatorName: string) {}

  /** @throws HsError `InvalidState` when called after `setup()` returned. */
  assertOpen(call: string): void {
    if (!this.#open) {
      throw new HsError(
        ErrorCode.InvalidState,
        `operator '${this.operatorName}': ${call} was called after setup() returned; declare ports only inside setup(spec)`,
      );
    }
  }

  /** Ends the declaration span. */
  close(): void {
    this.#open = false;
  }
}
