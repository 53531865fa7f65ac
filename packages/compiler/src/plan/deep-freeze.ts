/**
 * Freezes `value` and every array and plain object reachable from it. Class instances (operators,
 * interned `Device` and `DType` values) are shared with the rest of the program and left as they are.
 * The plan data it is used on has no cycles.
 */
export function deepFreeze<T>(value: T): T {
  if (Array.isArray(value) || isPlainObject(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as object)) deepFreeze(child);
  }
  return value;
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
