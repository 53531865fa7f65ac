import { HostBackend } from '@hs/streams';
import { describeStreamPointAttributes } from './stream-point-attributes-suite.js';

// The reduce, write and checksum launches run their host implementations, with the ordering checker on.
describeStreamPointAttributes('HostBackend', () => new HostBackend({ seed: 3, orderingChecker: true }), { points: 3000 });
