import type { RateGeneration, RateParameterValue, RejectedRateGeneration } from '@hs/compiler';
import type { HsError } from '@hs/streams';

/*
 * Owning, deep-frozen copies of the rate-generation records a session keeps for
 * `captureRateGenerations()`: nothing the caller passed in or gets back is shared mutably, so a captured
 * snapshot stays what it was (`Rate` values are immutable and shared). Cold: allocates.
 * Spec: "Size queue entries from nominal rates" (owning cold evidence).
 */

/** Frozen copies of parameter values. */
function ownedParameters(values: readonly RateParameterValue[]): readonly RateParameterValue[] {
  return Object.freeze(values.map(({ parameter, rate }) => Object.freeze({ parameter, rate })));
}

/** An owning, deep-frozen copy of a published generation. */
export function ownedRateGeneration(generation: RateGeneration): RateGeneration {
  return Object.freeze({
    rateGeneration: generation.rateGeneration,
    parameters: ownedParameters(generation.parameters),
    edges: Object.freeze(
      generation.edges.map(({ edge, activeDepth, nominalArrivals, recommendation }) => Object.freeze({ edge, activeDepth, nominalArrivals, recommendation })),
    ),
    ports: Object.freeze(
      generation.ports.map(({ port, direction, rate }) => Object.freeze({ port: Object.freeze({ operator: port.operator, port: port.port }), direction, rate })),
    ),
  });
}

/** The owning, deep-frozen record of a refused candidate: its number, a copy of its values, and why. */
export function rejectedRateGeneration(rateGeneration: number, candidate: readonly RateParameterValue[], error: HsError): RejectedRateGeneration {
  return Object.freeze({ rateGeneration, parameters: ownedParameters(candidate), code: error.code, reason: error.message });
}
