import { readFileSync } from 'node:fs';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { describe, expect, inject, it } from 'vitest';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages } from '../src/public-packages.js';

const packed = inject('packed');

describe('publint on each packed tarball', () => {
  for (const pkg of publicPackages()) {
    it(`${pkg.name}: no errors, warnings or suggestions (strict)`, async () => {
      const bytes = readFileSync(tarballOf(packed, pkg.name));
      const result = await publint({
        pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
        level: 'suggestion',
        strict: true,
      });
      const messages = result.messages.map((m) => `${m.type}: ${formatMessage(m, result.pkg) ?? m.code}`);
      expect(messages).toEqual([]);
    });
  }
});
