import { describePoolConformance } from './conformance/pool-conformance.js';
import { makeHostHarness } from './conformance/host-harness.js';

describePoolConformance('HostBackend (manual scheduling, ordering checker on)', makeHostHarness);
