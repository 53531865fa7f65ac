import { describePoolConformance, makeHostHarness } from '../src/test/index.js';

describePoolConformance('HostBackend (manual scheduling, ordering checker on)', makeHostHarness);
