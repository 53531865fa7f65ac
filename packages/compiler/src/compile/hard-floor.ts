import type { HardFloorContributor } from '../plan/plan-records.js';
import type { GraphIndex, IndexedEdge } from './graph-index.js';

/**
 * The semantic hard-floor contributors of `edge`: the minimum queue (1 entry), the consumer's window
 * and selector retention on the input (temporal contract), and the producer burst. Minimum queue and
 * retentions are alternative views of the same queued entries (group `retention`); the producer burst
 * is distinct live storage (group `burst`). Contributors with scenario `*` belong to every scenario.
 * Spec: "Size queue entries from nominal rates" (hard floor).
 */
export function hardFloorContributors(index: GraphIndex, edge: IndexedEdge): HardFloorContributor[] {
  const contributors: HardFloorContributor[] = [{ edge: edge.id, kind: 'minimumQueue', scenario: '*', group: 'retention', entries: 1 }];
  const contract = index.specs.get(edge.consumer)?.contract ?? null;
  for (const w of contract?.windows ?? []) {
    if (w.input === edge.flow.input) contributors.push({ edge: edge.id, kind: 'windowRetention', scenario: w.scenario ?? 'default', group: 'retention', entries: w.entries });
  }
  for (const s of contract?.selectors ?? []) {
    if (s.input === edge.flow.input) contributors.push({ edge: edge.id, kind: 'selectorRetention', scenario: s.scenario ?? 'default', group: 'retention', entries: s.entries });
  }
  if (edge.flow.output.burst > 1) contributors.push({ edge: edge.id, kind: 'producerBurst', scenario: '*', group: 'burst', entries: edge.flow.output.burst });
  return contributors;
}

/**
 * Composes contributors into the hard floor: within each scenario, the maximum of each group, summed
 * over groups; then the maximum across scenarios.
 */
export function composeHardFloor(contributors: readonly HardFloorContributor[]): number {
  const named = [...new Set(contributors.map((c) => c.scenario).filter((s) => s !== '*'))];
  const scenarios = named.length === 0 ? ['*'] : named;
  let floor = 0;
  for (const scenario of scenarios) {
    const groups = new Map<string, number>();
    for (const c of contributors) {
      if (c.scenario !== '*' && c.scenario !== scenario) continue;
      groups.set(c.group, Math.max(groups.get(c.group) ?? 0, c.entries));
    }
    let sum = 0;
    for (const entries of groups.values()) sum += entries;
    floor = Math.max(floor, sum);
  }
  return floor;
}
