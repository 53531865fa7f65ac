import { HostBackend } from '@hs/streams';
import { describeStreamPointsToGrid } from './stream-points-to-grid-suite.js';

// The launches run their host implementations: the logic CI checks without a GPU.
describeStreamPointsToGrid('HostBackend', () => new HostBackend(), { points: 2000, range: 6000 });
describeStreamPointsToGrid('HostBackend with seeded interleaving and the ordering checker', () => new HostBackend({ seed: 7, orderingChecker: true }), { points: 300, range: 6000 });
