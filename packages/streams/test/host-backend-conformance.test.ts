import { HostBackend } from '../src/index.js';
import { describeBackendConformance } from '../src/test/index.js';

describeBackendConformance('HostBackend (auto scheduling)', () => new HostBackend());
describeBackendConformance('HostBackend (seeded, two devices)', () => new HostBackend({ seed: 7, deviceCount: 2 }));
describeBackendConformance('HostBackend (ordering checker on)', () => new HostBackend({ orderingChecker: true }));
