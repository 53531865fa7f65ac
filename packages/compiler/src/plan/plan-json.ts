import { Device } from '@hs/streams';
import { DType } from '@hs/tensor';
import { Operator } from '../authoring/operator.js';
import { compareText } from '../compile/text-order.js';
import { Rate, RateRatio } from '../rates/rate.js';

/** A JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Schema marker of the canonical plan JSON. */
export const PLAN_JSON_SCHEMA = 'hs.execution-plan/1';

/**
 * Converts plan data into canonical JSON data: object keys sorted (code-unit order) at every level,
 * devices as `cpu`/`cuda:N`, dtypes by name, operator instances left out; arrays keep the plan's
 * deterministic order. `JSON.stringify` of the result is byte-stable for the same graph and options.
 */
export function toCanonicalJson(value: unknown): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (value instanceof Device) return value.toString();
  if (value instanceof DType) return value.name;
  if (value instanceof Rate || value instanceof RateRatio) return toCanonicalJson(value.toJSON());
  if (Array.isArray(value)) return value.map(toCanonicalJson);
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const key of Object.keys(value).sort(compareText)) {
      const child: unknown = (value as Record<string, unknown>)[key];
      if (child === undefined || child instanceof Operator) continue;
      out[key] = toCanonicalJson(child);
    }
    return out;
  }
  throw new TypeError(`plan JSON: cannot represent a ${typeof value}`);
}
