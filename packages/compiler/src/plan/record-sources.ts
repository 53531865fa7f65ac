/**
 * The `source` vocabularies of plan records: which rule produced a planned value. Part of the plan
 * schema (the compile passes that choose a source import it from here).
 * Spec: "Size queue entries from nominal rates".
 */

/** Where an edge's queue depth came from: given to `addFlow()`, rate-and-contract sizing, or `defaultQueueDepth`. */
export type QueueDepthSource = 'explicit' | 'automatic' | 'default';

/** Where a port's rate comes from. */
export type PortRateSource = 'nominal' | 'parameter' | 'follows' | 'upstream' | 'expected' | 'none';
