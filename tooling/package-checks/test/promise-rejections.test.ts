import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HsError } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { promiseExports } from '../src/promise-exports.js';
import { publicPackages } from '../src/public-packages.js';
import { PROMISE_CASES, caseScratch } from './promise-rejection-cases.js';

// The error rule (ARCHITECTURE.md, docs/guides/errors.md): every public function returning a Promise
// rejects with an HsError and resolves with the value. The exports come from the built .d.ts files,
// so a new async API fails this suite until test/promise-rejection-cases.ts has a case for it.
const enumerated = publicPackages().flatMap((pkg) => promiseExports(pkg));
const scratch = mkdtempSync(join(tmpdir(), 'hs-promise-cases-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
for (const [id, c] of Object.entries(PROMISE_CASES)) if (c.skip != null) console.log(`promise case ${id} skipped: ${c.skip}`);

describe('public promise-returning exports (enumerated from the built .d.ts of every public package)', () => {
  it('are found in every layer', () => {
    const ids = enumerated.map((e) => e.id);
    for (const known of ['@hs/cli:runHs', '@hs/runtime:RunSession#run', '@hs/ipc:ChannelRuntime#receive', '@hs/tensor:Tensor#copyToHost', '@hs/streams:Backend#synchronizeStream']) {
      expect(ids).toContain(known);
    }
  });

  it('each have a failing-input case, and every case names an export that exists', () => {
    expect(enumerated.filter((e) => PROMISE_CASES[e.id] === undefined).map((e) => `${e.id}: ${e.returns}`), 'add a case to test/promise-rejection-cases.ts').toEqual([]);
    expect(Object.keys(PROMISE_CASES).filter((id) => !enumerated.some((e) => e.id === id)), 'remove the case of an export that is gone').toEqual([]);
  });

  it('never resolve a Result (a failure must reject)', () => {
    expect(enumerated.filter((e) => /Promise<(Result|Ok|Err)\b/.test(e.returns)).map((e) => `${e.id}: ${e.returns}`)).toEqual([]);
  });

  for (const { id, returns } of enumerated) {
    const c = PROMISE_CASES[id];
    if (c === undefined) continue;
    const what = 'rejects' in c ? `rejects with HsError ${c.rejects}` : 'resolves' in c ? `never rejects (${c.resolves})` : `a user contract: ${c.contract}`;
    it.skipIf(c.skip != null)(`${id} (${returns}): ${what}`, async () => {
      const settled = c.run(caseScratch(scratch, id));
      if (!('rejects' in c)) {
        await settled;
        return;
      }
      const thrown = await settled.then(
        (value: unknown) => new Error(`resolved with ${String(value)} instead of rejecting`),
        (error: unknown) => error,
      );
      expect(thrown).toBeInstanceOf(HsError);
      expect((thrown as HsError).code).toBe(c.rejects);
      if (c.message !== undefined) expect((thrown as HsError).message).toContain(c.message);
    });
  }
});
