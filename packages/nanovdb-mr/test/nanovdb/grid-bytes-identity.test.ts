import { readFileSync } from 'node:fs';
import { HostBackend } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { HostResource } from '../../src/index.js';
import { byteCases, caseHash } from '../support/byte-identity-clouds.js';

/** SHA-256 of every case's grid, recorded before the packed-key sort and the flat grid writer. */
const recorded = JSON.parse(readFileSync(new URL('../fixtures/nanovdb/grid-bytes-identity.json', import.meta.url), 'utf8')) as Record<string, string>;

describe('host builders write the recorded bytes', () => {
  it('pointsToGrid, pointAttributesToGrid and voxelsToGrid give every recorded grid byte for byte, each passing validateGrids (several hundred clouds)', () => {
    const backend = new HostBackend();
    const resource = new HostResource(backend);
    const cases = byteCases();
    expect(cases.length).toBeGreaterThanOrEqual(500);
    expect(Object.keys(recorded).length).toBe(cases.length);
    const differ: string[] = [];
    for (const c of cases) if (caseHash(c, backend, resource) !== recorded[c.label]) differ.push(c.label);
    backend.dispose();
    expect(differ).toEqual([]);
  });
});
