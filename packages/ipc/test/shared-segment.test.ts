import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HsError, unwrap } from '@hs/streams';
import { SharedSegment, ipcAvailability, reapStaleSegments } from '../src/index.js';

const available = ipcAvailability();
const name = (tag: string): string => `/hs-test-${process.pid}-${tag}`;
/** The addon the tests load (a local build unless HS_IPC_NATIVE_PATH names another), for child processes. */
const addonPath = process.env.HS_IPC_NATIVE_PATH ?? fileURLToPath(new URL('../build/hs_ipc.node', import.meta.url));

describe.skipIf(!available.available)('SharedSegment', () => {
  it('creates 0600, maps zero copy in a second mapping, refuses a second create, unlinks', () => {
    const a = SharedSegment.create({ name: name('a'), byteSize: 8192 });
    if (!a.ok) throw a.error;
    expect((statSync(`/dev/shm${name('a')}`).mode & 0o777).toString(8)).toBe('600');
    const again = SharedSegment.create({ name: name('a'), byteSize: 8192 });
    expect(again.ok ? null : again.error.code).toBe(ErrorCode.AlreadyExists);
    const b = SharedSegment.open({ name: name('a'), byteSize: 8192 });
    if (!b.ok) throw b.error;
    a.value.bytes[100] = 42;
    expect(b.value.bytes[100]).toBe(42);
    expect(b.value.byteSize).toBe(8192);
    const tooSmall = SharedSegment.open({ name: name('a'), byteSize: 8193 });
    expect(tooSmall.ok ? null : tooSmall.error.code).toBe(ErrorCode.InvalidArgument);
    expect(tooSmall.ok ? '' : tooSmall.error.message).toMatch(/holds 8192 bytes, fewer than the 8193 bytes announced/);
    expect(a.value.unlink()).toEqual({ ok: true, value: true });
    expect(a.value.unlink()).toEqual({ ok: true, value: false });
    const gone = SharedSegment.open({ name: name('a'), byteSize: 8192 });
    expect(gone.ok ? null : gone.error.code).toBe(ErrorCode.NotFound);
    // Mappings outlive the name; close() detaches so stale views read as empty instead of crashing.
    expect(b.value.bytes[100]).toBe(42);
    const view = a.value.bytes;
    a.value.close();
    expect(view.length).toBe(0);
    expect(view[100]).toBeUndefined();
    a.value.close();
    b.value.close();
  });

  it('open maps read-only by default: writable is false, and a store into it kills the writer (SIGSEGV), not the segment', () => {
    const a = unwrap(SharedSegment.create({ name: name('ro'), byteSize: 4096 }));
    expect(a.writable).toBe(true);
    a.bytes[7] = 9;
    const reader = unwrap(SharedSegment.open({ name: name('ro'), byteSize: 4096 }));
    expect(reader.writable).toBe(false);
    expect(reader.bytes[7]).toBe(9);
    const writer = unwrap(SharedSegment.open({ name: name('ro'), byteSize: 4096, access: 'readWrite' }));
    expect(writer.writable).toBe(true);
    writer.bytes[8] = 10;
    expect(reader.bytes[8]).toBe(10);
    writer.close();
    reader.close();
    expect(() => SharedSegment.open({ name: name('ro'), byteSize: 4096, access: 'write' as never })).toThrow(HsError);
    a.close();
    unwrap(SharedSegment.unlinkName(name('ro')));
  });

  it.skipIf(!existsSync(addonPath))('a read-only mapping cannot be written: the writing process dies with SIGSEGV, the segment is untouched', () => {
    const a = unwrap(SharedSegment.create({ name: name('segv'), byteSize: 4096 }));
    try {
      a.bytes[0] = 1;
      // The child maps the segment as a subscriber does (writable = false) and stores into it.
      const script = `const a = require(${JSON.stringify(addonPath)});
        const m = a.openSegment(${JSON.stringify(name('segv'))}, 4096, 4096, false);
        process.stdout.write('mapped writable=' + m.writable + ';');
        new Uint8Array(m.buffer)[0] = 99;
        process.stdout.write('survived');`;
      const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
      expect(child.stdout).toBe('mapped writable=false;');
      expect(child.signal).toBe('SIGSEGV');
      expect(a.bytes[0]).toBe(1);
    } finally {
      a.close();
      unwrap(SharedSegment.unlinkName(name('segv')));
    }
  });

  it('reapStaleSegments unlinks boundary segments of dead publishers of this user, and only those', () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    const uid = process.getuid!();
    const stale = unwrap(SharedSegment.create({ name: `/hs.${uid}.${deadPid}.cafe.0001`, byteSize: 64 }));
    const live = unwrap(SharedSegment.create({ name: `/hs.${uid}.${process.pid}.cafe.0002`, byteSize: 64 }));
    expect(reapStaleSegments()).toBeGreaterThanOrEqual(1);
    expect(existsSync(`/dev/shm/hs.${uid}.${deadPid}.cafe.0001`)).toBe(false);
    expect(existsSync(`/dev/shm/hs.${uid}.${process.pid}.cafe.0002`)).toBe(true);
    stale.close();
    unwrap(live.unlink());
    live.close();
  });

  it('throws HsError for malformed names and sizes', () => {
    expect(() => SharedSegment.create({ name: 'no-slash', byteSize: 10 })).toThrow(HsError);
    expect(() => SharedSegment.create({ name: '/a/b', byteSize: 10 })).toThrow(HsError);
    expect(() => SharedSegment.create({ name: name('z'), byteSize: 0 })).toThrow(HsError);
    expect(() => SharedSegment.open({ name: name('z'), byteSize: -1 })).toThrow(HsError);
    expect(() => SharedSegment.open({ name: name('z'), byteSize: 0 })).toThrow(HsError);
  });
});

describe.skipIf(available.available)('SharedSegment without the addon', () => {
  it('returns NotSupported', () => {
    const r = SharedSegment.create({ name: name('n'), byteSize: 10 });
    expect(r.ok ? null : r.error.code).toBe(ErrorCode.NotSupported);
  });
});
