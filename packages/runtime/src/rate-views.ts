import type { ExecutionPlan, PortRateView, RateGeneration } from '@hs/compiler';

/** A session-owned, in-place-updated `PortRateView`. */
class MutablePortRateView implements PortRateView {
  hz = 0;
  exact = '';
  rateGeneration = 0;
}

/**
 * The `PortRateView` of every rated port, keyed `direction:operator.port`, made once when the session
 * is created and rewritten in place when a rate generation is published (a cold step), so
 * `ctx.rate(port)` is an O(1) lookup that allocates nothing. Spec: "Size queue entries from nominal rates".
 */
export class RateViews {
  private readonly views = new Map<string, MutablePortRateView>();

  constructor(plan: ExecutionPlan) {
    for (const r of plan.portRates) this.views.set(RateViews.key(r.direction, r.port.operator, r.port.port), new MutablePortRateView());
  }

  /** The key of a port. */
  static key(direction: 'input' | 'output', operator: string, port: string): string {
    return `${direction}:${operator}.${port}`;
  }

  /** The view of a port, or `null` when the plan has no rate for it. */
  view(key: string): PortRateView | null {
    return this.views.get(key) ?? null;
  }

  /** The views of one operator's ports that the plan has a rate for, by port name (its `ctx.rate()` table). */
  portViews(operator: string, inputs: readonly { name: string }[], outputs: readonly { name: string }[]): Map<string, PortRateView> {
    const rates = new Map<string, PortRateView>();
    for (const [direction, ports] of [['input', inputs], ['output', outputs]] as const) {
      for (const port of ports) {
        const view = this.views.get(RateViews.key(direction, operator, port.name));
        if (view !== undefined) rates.set(port.name, view);
      }
    }
    return rates;
  }

  /** Rewrites every view from `generation`. */
  publish(generation: RateGeneration): void {
    for (const p of generation.ports) {
      const view = this.views.get(RateViews.key(p.direction, p.port.operator, p.port.port));
      if (view === undefined) continue;
      const { n, d } = p.rate.hz;
      view.hz = Number(n) / Number(d);
      view.exact = p.rate.toJSON().hz;
      view.rateGeneration = generation.rateGeneration;
    }
  }
}
