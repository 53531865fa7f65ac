// The subset of vitest's API the hs suites use, on node:test and @vitest/expect, so a suite can be
// bundled into one file and run by a bare `node` (the GPU machine has no node_modules).
import { ASYMMETRIC_MATCHERS_OBJECT, JestAsymmetricMatchers, JestChaiExpect, JestExtend, chai, setState } from '@vitest/expect';
import * as nodeTest from 'node:test';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

/** What vitest passes a test body; `skip(note)` ends the test as skipped, like vitest's `ctx.skip()`. */
interface TestContext {
  skip(note?: string): never;
}
type Body = (ctx: TestContext) => unknown;

/** Thrown by `TestContext.skip` to leave the body; the test is then reported as skipped. */
const SKIPPED = Symbol('skipped');

async function runBody(t: nodeTest.TestContext, fn: Body): Promise<void> {
  try {
    await fn({
      skip: (note?: string): never => {
        t.skip(note);
        throw SKIPPED;
      },
    });
  } catch (cause) {
    if (cause !== SKIPPED) throw cause;
  }
}
type Hook = () => unknown;

export const expect = ((value: unknown, message?: string) => chai.expect(value, message)) as unknown as typeof import('vitest').expect;
Object.assign(expect, chai.expect);
Object.assign(expect, (globalThis as Record<symbol, unknown>)[ASYMMETRIC_MATCHERS_OBJECT as unknown as symbol]);
setState({ assertionCalls: 0, isExpectingAssertions: false, isExpectingAssertionsError: null, expectedAssertionsNumber: null, expectedAssertionsNumberErrorGen: null }, expect);

function withSkipIf<T extends (name: string, fn: never) => unknown>(run: T, skip: T) {
  return Object.assign(run, { skipIf: (condition: unknown) => (condition ? skip : run), skip, runIf: (condition: unknown) => (condition ? run : skip) });
}

export const describe = withSkipIf(
  (name: string, fn: () => unknown) => nodeTest.describe(name, () => void fn()),
  (name: string, fn: () => unknown) => nodeTest.describe(name, { skip: true }, () => void fn()),
);
export const it = withSkipIf(
  (name: string, fn: Body) => nodeTest.it(name, (t) => runBody(t, fn)),
  (name: string, _fn: Body) => nodeTest.it(name, { skip: true }, () => undefined),
);
export const test = it;
export const beforeEach = (fn: Hook) => nodeTest.beforeEach(async () => void (await fn()));
export const afterEach = (fn: Hook) => nodeTest.afterEach(async () => void (await fn()));
export const beforeAll = (fn: Hook) => nodeTest.before(async () => void (await fn()));
export const afterAll = (fn: Hook) => nodeTest.after(async () => void (await fn()));
