export { TensorPool } from './tensor-pool.js';
export type { TensorRequest, TensorPoolStats } from './tensor-pool.js';
export type { TensorPoolSpec } from './pool-spec.js';
export type { TensorLoan } from './tensor-loan.js';
export type { WriteGuard } from './write-guard.js';
export { poolResource, needsStreamOrder } from './pool-resource.js';
export type { PoolMemory } from './pool-resource.js';
