import type { Operator } from '../authoring/operator.js';
import type { TemporalContract } from '../authoring/operator-spec.js';
import type { InputPort, OutputPort } from '../authoring/ports.js';
import { maxAdmittedRate, type RateDomain } from '../params/param-field.js';
import type { ParamRef } from '../params/bound-params.js';
import type { PortRateSource } from '../plan/record-sources.js';
import { Rate } from '../rates/rate.js';
import { type Rational, multiplyRational, rational } from '../rates/rational.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';

/**
 * A port's rate as `factor` (Hz), or `parameter value × factor` when a runtime-mutable rate parameter
 * drives it; the same shape lets a session re-evaluate a candidate generation without the graph.
 */
export interface RateTerm {
  /** The runtime-mutable rate parameter, or `null` for a fixed rate. */
  readonly parameter: ParamRef<Rate> | null;
  /** Hz when `parameter` is null, else a dimensionless multiplier. */
  readonly factor: Rational;
}

/** A resolved port rate. */
export interface ResolvedRate {
  readonly term: RateTerm;
  readonly source: PortRateSource;
  /** Generation-zero rate. */
  readonly active: Rate;
  /** Smallest and largest rates the admitted parameter domain allows (equal to `active` for fixed rates). */
  readonly min: Rate;
  readonly max: Rate;
}

/** Resolved rates of outputs and inputs (ports without rate evidence are absent). */
export interface RateResolution {
  readonly outputs: ReadonlyMap<OutputPort, ResolvedRate>;
  readonly inputs: ReadonlyMap<InputPort, ResolvedRate>;
}

/** Evaluates a term with a parameter value (or the parameter's generation-zero value). */
export function evaluateRateTerm(term: RateTerm, parameterValue: Rate | null = null): Rate {
  const base = term.parameter === null ? rational(1n) : (parameterValue ?? term.parameter.value).hz;
  return Rate.fromRational(multiplyRational(base, term.factor));
}

function resolved(term: RateTerm, source: PortRateSource): ResolvedRate {
  const active = evaluateRateTerm(term);
  if (term.parameter === null || term.parameter.declaration.mutability !== 'runtime') {
    const fixed = { parameter: null, factor: active.hz };
    return { term: fixed, source, active, min: active, max: active };
  }
  const domain = term.parameter.declaration.domain as { admitted: RateDomain };
  const admitted = domain.admitted;
  const min = Array.isArray(admitted) ? (admitted as readonly Rate[]).reduce((a, b) => (b.compare(a) < 0 ? b : a)) : (admitted as { min: Rate }).min;
  return { term, source, active, min: evaluateRateTerm(term, min), max: evaluateRateTerm(term, maxAdmittedRate(admitted)) };
}

/**
 * Resolves port rates in topological order: an output's `nominalRate` (literal or a rate parameter),
 * or `follows(input, ratio)` of an input of the same operator; an input takes its connected
 * producer's rate (authoritative), else its `expectedRate` when the producer positively declares
 * none. Reports `RATE_DECLARATION_INVALID` (a follows, trigger, window or selector naming another
 * operator's input; a non-rate parameter) and
 * `RATE_EXPECTATION_MISMATCH` (warning). Exact rational arithmetic throughout.
 * Spec: "Size queue entries from nominal rates".
 */
export function resolveRates(index: GraphIndex, order: readonly Operator[], validParams: ReadonlySet<Operator>, log: DiagnosticLog): RateResolution {
  const outputs = new Map<OutputPort, ResolvedRate>();
  const inputs = new Map<InputPort, ResolvedRate>();
  for (const op of order) {
    const spec = index.specs.get(op);
    if (spec === undefined) continue;
    checkContractPorts(op, spec.contract, log);
    for (const input of spec.inputs) {
      const producer = index.intoInput.get(input)?.[0]?.flow.output;
      const upstream = producer === undefined ? undefined : outputs.get(producer);
      const expected = input.declaredExpectedRate;
      if (upstream !== undefined) {
        inputs.set(input, { ...upstream, source: 'upstream' });
        if (expected !== null && !expected.equals(upstream.active)) {
          log.warning(
            DiagnosticCode.RateExpectationMismatch,
            { kind: 'port', operator: op.name, port: input.name },
            `input ${input.key} expects ${expected.toString()} but ${producer?.key ?? '?'} declares ${upstream.active.toString()}; the producer's rate is used — update expectedRate() or the producer`,
          );
        }
      } else if (expected !== null && (producer === undefined || producer.rate === null)) {
        inputs.set(input, resolved({ parameter: null, factor: expected.hz }, 'expected'));
      }
    }
    for (const output of spec.outputs) {
      const declaration = output.rate;
      if (declaration === null) continue;
      const subject = { kind: 'port', operator: op.name, port: output.name } as const;
      if (declaration.kind === 'nominal') {
        outputs.set(output, resolved({ parameter: null, factor: declaration.rate.hz }, 'nominal'));
      } else if (declaration.kind === 'parameter') {
        const ref = declaration.ref;
        if (ref.params.operator !== op || ref.declaration.domain.kind !== 'rate') {
          log.error(
            DiagnosticCode.RateDeclarationInvalid,
            subject,
            `output ${output.key}.nominalRate(${ref.key}) needs a rateParam field of operator '${op.name}'; bind a rate field of this operator's own parameters`,
          );
        } else if (validParams.has(op)) {
          outputs.set(output, resolved({ parameter: ref, factor: rational(1n) }, 'parameter'));
        }
      } else if (declaration.input.operator !== op) {
        log.error(DiagnosticCode.RateDeclarationInvalid, subject, `output ${output.key} follows ${declaration.input.key}, an input of another operator; follow an input of '${op.name}'`);
      } else {
        const base = inputs.get(declaration.input);
        if (base !== undefined) {
          outputs.set(output, {
            ...resolved({ parameter: base.term.parameter, factor: multiplyRational(base.term.factor, declaration.ratio.value) }, 'follows'),
          });
        }
      }
    }
  }
  return { outputs, inputs };
}

function checkContractPorts(op: Operator, contract: TemporalContract | null, log: DiagnosticLog): void {
  if (contract === null) return;
  const named = [
    ...('input' in contract.trigger ? [{ what: 'trigger', input: contract.trigger.input }] : []),
    ...(contract.required ?? []).map((input) => ({ what: 'required input', input })),
    ...(contract.windows ?? []).map((w) => ({ what: 'window', input: w.input })),
    ...(contract.selectors ?? []).map((s) => ({ what: 'selector', input: s.input })),
  ];
  for (const { what, input } of named) {
    if (input.operator === op) continue;
    log.error(
      DiagnosticCode.RateDeclarationInvalid,
      { kind: 'operator', operator: op.name },
      `operator '${op.name}': its temporal contract's ${what} names ${input.key}, an input of another operator; name one of its own inputs (or a clock trigger)`,
    );
  }
}
