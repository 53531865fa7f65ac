import type { ExecutionPlan, TensorAllocationRecord } from '@hs/compiler';
import { isResource, type SyncResource } from '@hs/nanovdb-mr';
import { poolResource } from '@hs/pool';
import { ErrorCode, HsError, MEMORY_KINDS, err, ok, type Backend, type MemoryKind, type Result } from '@hs/streams';

/**
 * Which resource each graph pool's backing comes from, bound at `RunSession.create`. A pool takes the
 * first that applies: `providers[pool.provider]`, `memoryKinds[pool.memoryKind]`, `default`; a pool none
 * applies to uses the current device resource (`setCurrentDeviceResource` of `@hs/nanovdb-mr`) for
 * cudaDevice memory and the memory kind's `defaultResource` otherwise. A cudaDevice pool needs a
 * stream-ordered resource (its backing is allocated on the producer stream); lift a synchronous one with
 * `AsyncFromSync`. Boundary pools (published topics) take their memory from the boundary provider and no
 * binding. Spec: "Sized cold, borrowed hot" (the plan names each pool's provider), nanovdb-memory-resources
 * "Resource (allocator): two tiers".
 * @example
 * ```ts
 * const stats = new StatisticsResource(new PinnedResource(backend));
 * const session = unwrap(RunSession.create(plan, { backend, resources: { providers: { 'pool:camera.frame': stats } } }));
 * // a device without memory pools:
 * RunSession.create(plan, { backend, resources: { memoryKinds: { cudaDevice: new AsyncFromSync(backend, new MallocResource(backend, Device.cuda(0))) } } });
 * ```
 */
export interface PoolResourceBindings {
  /** Per provider name (`TensorAllocationRecord.provider`: the output's declared `provider`, else the pool id). */
  readonly providers?: Readonly<Record<string, SyncResource>>;
  /** Per memory kind, for pools whose provider has no binding. */
  readonly memoryKinds?: Readonly<Partial<Record<MemoryKind, SyncResource>>>;
  /** For every other pool (it must suit each pool it reaches: kind, device and tier are checked). */
  readonly default?: SyncResource;
}

/**
 * Resolves and checks the resource of every non-boundary pool of `plan`, before anything is allocated.
 * @returns pool id -> resource; InvalidArgument (naming the pool, its provider and the binding) for a
 *   provider the plan does not have or that backs a boundary pool, a resource of another memory kind,
 *   device or backend, or a synchronous resource for a cudaDevice pool; NotSupported for a cudaDevice pool
 *   left to the default resource on a device without memory pools (the message names the binding to add).
 * @throws HsError InvalidArgument when `bindings` or one of its values has the wrong type (not a resource).
 */
export function bindPoolResources(plan: ExecutionPlan, backend: Backend, bindings: PoolResourceBindings | undefined): Result<ReadonlyMap<string, SyncResource>> {
  const { providers = {}, memoryKinds = {}, default: fallback } = checkShape(bindings ?? {});
  const planProviders = new Map(plan.pools.map((p) => [p.provider, p]));
  for (const name of Object.keys(providers)) {
    const record = planProviders.get(name);
    if (record === undefined) {
      return err(
        ErrorCode.InvalidArgument,
        `resources.providers names '${name}', which no pool of plan ${plan.name} has; its providers are ${[...planProviders.keys()].join(', ') || 'none'}`,
      );
    }
    if (record.boundary !== null) {
      return err(ErrorCode.InvalidArgument, `resources.providers names '${name}', the boundary pool of topic ${record.boundary.topic}: its memory comes from the boundary provider, not a resource`);
    }
  }
  const bound = new Map<string, SyncResource>();
  for (const record of plan.pools) {
    if (record.boundary !== null) continue;
    const [resource, from] = bindingOf(record, providers, memoryKinds, fallback);
    const checked = poolResource(backend, { name: record.id, memoryKind: record.memoryKind, device: record.device }, resource);
    if (!checked.ok) {
      const hint =
        resource === null && checked.error.code === ErrorCode.NotSupported
          ? `; bind one with RunSessionOptions.resources (providers['${record.provider}'] or memoryKinds.${record.memoryKind})`
          : '';
      return err(checked.error.code, `${checked.error.detail} (provider '${record.provider}', ${from})${hint}`, checked.error);
    }
    bound.set(record.id, checked.value);
  }
  return ok(bound);
}

/** The bound resource of a pool (or `null` for the defaults) and where the binding came from, for messages. */
function bindingOf(
  record: TensorAllocationRecord,
  providers: Readonly<Record<string, SyncResource>>,
  memoryKinds: Readonly<Partial<Record<MemoryKind, SyncResource>>>,
  fallback: SyncResource | undefined,
): [SyncResource | null, string] {
  const byProvider = Object.hasOwn(providers, record.provider) ? providers[record.provider] : undefined;
  if (byProvider !== undefined) return [byProvider, `resources.providers['${record.provider}']`];
  const byKind = memoryKinds[record.memoryKind];
  if (byKind !== undefined) return [byKind, `resources.memoryKinds.${record.memoryKind}`];
  if (fallback !== undefined) return [fallback, 'resources.default'];
  return [null, 'no binding: the default resource'];
}

function checkShape(bindings: PoolResourceBindings): PoolResourceBindings {
  const bad = (what: string): never => {
    throw new HsError(ErrorCode.InvalidArgument, `RunSessionOptions.resources: ${what}`);
  };
  if (typeof bindings !== 'object' || bindings === null) bad('must be an object { providers?, memoryKinds?, default? }');
  const { providers, memoryKinds, default: fallback } = bindings;
  for (const [label, map] of [['providers', providers], ['memoryKinds', memoryKinds]] as const) {
    if (map === undefined) continue;
    if (typeof map !== 'object' || map === null) bad(`${label} must be an object of resources`);
    for (const [key, value] of Object.entries(map as object)) {
      if (label === 'memoryKinds' && !MEMORY_KINDS.includes(key as MemoryKind)) bad(`memoryKinds.${key} is not a memory kind (${MEMORY_KINDS.join(', ')})`);
      if (!isResource(value)) bad(`${label}['${key}'] is not a resource (an object with allocate and deallocate)`);
    }
  }
  if (fallback !== undefined && !isResource(fallback)) bad('default is not a resource (an object with allocate and deallocate)');
  return bindings;
}
