import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { promiseExports } from '../src/promise-exports.js';
import { readManifest } from '../src/public-packages.js';

describe('promiseExports (a fixture package of hand-written declarations)', () => {
  it('lists every function and method returning a Promise, with its declared type, and nothing else', () => {
    const dir = fileURLToPath(new URL('./fixtures/promise-exports', import.meta.url));
    const listed = promiseExports({ name: '@fixture/promise-exports', dir, manifest: readManifest(dir) });
    expect(listed).toEqual([
      { id: '@fixture/promise-exports:Hooked#describe', returns: 'Promise<string>' },
      { id: '@fixture/promise-exports:legacy', returns: 'Promise<Result<void>>' },
      { id: '@fixture/promise-exports:load', returns: 'Promise<Uint8Array<ArrayBufferLike>>' },
      { id: '@fixture/promise-exports:Provider#start', returns: 'Promise<void>' },
      { id: '@fixture/promise-exports:Session.open', returns: 'Promise<Session>' },
      { id: '@fixture/promise-exports:Session#[Symbol.asyncDispose]', returns: 'Promise<void>' },
      { id: '@fixture/promise-exports:Session#admit', returns: 'Promise<void> | null' },
      { id: '@fixture/promise-exports:Session#onDone', returns: 'Promise<void>' },
      { id: '@fixture/promise-exports:Session#run', returns: 'Promise<number>' },
      { id: '@fixture/promise-exports/extra:reopen', returns: 'Promise<Session>' },
    ]);
  });
});
