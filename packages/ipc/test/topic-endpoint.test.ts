import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { ipcAvailability } from '../src/ipc-native.js';
import { reapStaleDoorbells, topicDirectory } from '../src/topic-endpoint.js';

const base = mkdtempSync(join(tmpdir(), 'hs-ipc-endpoint-'));
const endpoint = fileURLToPath(new URL('../src/topic-endpoint.ts', import.meta.url));

describe('topicDirectory', () => {
  it('creates the last level with mode 0700 and accepts it on the next call', () => {
    const dir = join(base, 'topics');
    const first = topicDirectory(dir);
    expect(first).toEqual({ ok: true, value: dir });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(topicDirectory(dir)).toEqual({ ok: true, value: dir });
  });

  it('refuses a missing parent with NotFound naming the path and what to do, without creating it', () => {
    const dir = join(base, 'absent', 'topics');
    const r = topicDirectory(dir);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe(ErrorCode.NotFound);
    expect(r.error.message).toContain(dir);
    expect(r.error.message).toContain('runtimeDirectory');
    expect(() => statSync(join(base, 'absent'))).toThrow();
  });

  it('refuses a parent that is a file with InvalidArgument', () => {
    writeFileSync(join(base, 'file'), '');
    const r = topicDirectory(join(base, 'file', 'topics'));
    expect(r.ok ? undefined : r.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it('keeps refusing a directory open to group or others', () => {
    const dir = mkdtempSync(join(base, 'open-'));
    spawnSync('chmod', ['755', dir]);
    const r = topicDirectory(dir);
    expect(r.ok ? undefined : r.error.code).toBe(ErrorCode.PermissionDenied);
  });

  /** Runs `body` with XDG_RUNTIME_DIR set to `value`, restoring it after. */
  function withXdg<T>(value: string, body: () => T): T {
    const saved = process.env['XDG_RUNTIME_DIR'];
    process.env['XDG_RUNTIME_DIR'] = value;
    try {
      return body();
    } finally {
      if (saved === undefined) delete process.env['XDG_RUNTIME_DIR'];
      else process.env['XDG_RUNTIME_DIR'] = saved;
    }
  }

  it('prefers $XDG_RUNTIME_DIR/hs-ipc when XDG_RUNTIME_DIR is set', () => {
    const xdg = mkdtempSync(join(base, 'xdg-'));
    expect(withXdg(xdg, () => topicDirectory())).toEqual({ ok: true, value: join(xdg, 'hs-ipc') });
    expect(statSync(join(xdg, 'hs-ipc')).mode & 0o777).toBe(0o700);
  });

  it('repairs the mode of a default directory of this user (chmod 0700) instead of refusing it', () => {
    const xdg = mkdtempSync(join(base, 'xdg-mode-'));
    mkdirSync(join(xdg, 'hs-ipc'));
    chmodSync(join(xdg, 'hs-ipc'), 0o755);
    expect(withXdg(xdg, () => topicDirectory())).toEqual({ ok: true, value: join(xdg, 'hs-ipc') });
    expect(statSync(join(xdg, 'hs-ipc')).mode & 0o777).toBe(0o700);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a directory another user took first, naming it, its owner and the fix (needs root to chown; skipped otherwise)', () => {
    const xdg = mkdtempSync(join(base, 'xdg-squat-'));
    mkdirSync(join(xdg, 'hs-ipc'), { mode: 0o700 });
    chownSync(join(xdg, 'hs-ipc'), 65534, 65534);
    for (const r of [withXdg(xdg, () => topicDirectory()), topicDirectory(join(xdg, 'hs-ipc'))]) {
      expect(r.ok ? undefined : r.error.code).toBe(ErrorCode.PermissionDenied);
      const message = r.ok ? '' : r.error.message;
      expect(message).toContain(join(xdg, 'hs-ipc'));
      expect(message).toMatch(/belongs to uid 65534\b/);
      expect(message).toContain('runtimeDirectory');
    }
    const viaDefault = withXdg(xdg, () => topicDirectory());
    expect(viaDefault.ok ? '' : viaDefault.error.message).toContain('set XDG_RUNTIME_DIR');
    // Never taken over: its owner and mode are unchanged.
    expect(statSync(join(xdg, 'hs-ipc')).uid).toBe(65534);
  });

  it('returns NotFound for XDG_RUNTIME_DIR under /proc instead of spinning (checked in a child with a time limit)', () => {
    const script = `import(${JSON.stringify(endpoint)}).then((m) => { const r = m.topicDirectory(); console.log(JSON.stringify(r.ok ? r : { code: r.error.code, message: r.error.message })); })`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      env: { ...process.env, XDG_RUNTIME_DIR: '/proc/hs-nope' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.signal).toBeNull();
    const line = JSON.parse(child.stdout.trim()) as { code: string; message: string };
    expect(line.code).toBe(ErrorCode.NotFound);
    expect(line.message).toContain('/proc/hs-nope/hs-ipc');
    expect(line.message).toContain('XDG_RUNTIME_DIR');
  });
});

describe('reapStaleDoorbells', () => {
  it.skipIf(!ipcAvailability().available)('removes the doorbell FIFOs of a publisher pid that is gone, and nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hs-reap-'));
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const token = '0123456789abcdef';
    const stale = [`cam.${gone}.${token}.pub`, `cam.${gone}.${token}.sub`];
    const live = [`cam.${process.pid}.${token}.pub`, `cam.${process.pid}.${token}.sub`];
    const plainFile = `cam.${gone}.fedcba9876543210.pub`;
    for (const name of [...stale, ...live]) expect(spawnSync('mkfifo', ['-m', '600', join(dir, name)]).status).toBe(0);
    writeFileSync(join(dir, plainFile), '');
    writeFileSync(join(dir, 'cam.sock.txt'), '');
    expect(reapStaleDoorbells(dir)).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([plainFile, ...live, 'cam.sock.txt'].sort());
    expect(reapStaleDoorbells(join(dir, 'missing'))).toBe(0);
  });
});
