/**
 * Freeze an object and everything reachable from it, so no module can change the configuration
 * after it was validated.
 *
 * @example
 * const c = deepFreeze({ http: { concurrency: 4 } }); Object.isFrozen(c.http) // true
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
