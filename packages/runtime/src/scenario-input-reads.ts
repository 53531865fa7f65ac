import { DEFAULT_SCENARIO, type ExecutionPlan, type PlanOperator } from '@hs/compiler';
import { ErrorCode, type Result, err, ok } from '@hs/streams';
import type { InputRead } from './input-binding.js';

/** How one input is read in the session's scenario: its read form and how many entries it holds. */
export interface ScenarioInputRead {
  readonly read: InputRead;
  readonly entries: number;
}

/**
 * What each input of a contracted operator reads in `scenario` (`operator.port` -> read and entries):
 * its window or selector there, else `oldest` for the trigger input and `newest` for the others.
 * Inputs of operators without a contract are left out (`oldest`, the default).
 * @returns `InvalidArgument` for a scenario no contract names, or an input with a window and a selector in it.
 */
export function inputReads(plan: ExecutionPlan, scenario: string): Result<Map<string, ScenarioInputRead>> {
  const named = new Set<string>([DEFAULT_SCENARIO]);
  const reads = new Map<string, ScenarioInputRead>();
  for (const planned of plan.operators) {
    const schedule = planned.schedule;
    if (schedule === null) continue;
    for (const r of [...schedule.windows, ...schedule.selectors]) named.add(r.scenario);
    for (const input of planned.inputs) {
      const read = inputRead(planned, input.name, scenario);
      if (!read.ok) return read;
      reads.set(`${planned.name}.${input.name}`, read.value);
    }
  }
  if (!named.has(scenario)) {
    return err(ErrorCode.InvalidArgument, `RunSessionOptions.scenario ${JSON.stringify(scenario)} is named by no window or selector of plan ${plan.name}; choose one of ${[...named].join(', ')}`);
  }
  return ok(reads);
}

function inputRead(planned: PlanOperator, port: string, scenario: string): Result<ScenarioInputRead> {
  const schedule = planned.schedule!;
  const window = schedule.windows.find((w) => w.port === port && w.scenario === scenario);
  const selector = schedule.selectors.find((w) => w.port === port && w.scenario === scenario);
  if (window !== undefined && selector !== undefined) {
    return err(
      ErrorCode.InvalidArgument,
      `operator ${planned.name}: input ${port} has both a window and a selector in scenario ${scenario}; an activation either consumes its entries or keeps them — declare one per scenario`,
    );
  }
  if (window !== undefined) return ok({ read: 'window', entries: window.entries });
  if (selector !== undefined) return ok({ read: 'selector', entries: selector.entries });
  const trigger = schedule.trigger;
  return ok({ read: trigger.kind === 'input' && trigger.port === port ? 'oldest' : 'newest', entries: 1 });
}
