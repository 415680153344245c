// What a reload changes: the dotted paths of the config keys whose values differ.

/** Leaves of two parsed configs that differ; arrays (upstreams, cluster seeds) count as one value. */
export function changedKeys(prev: unknown, next: unknown, path = ''): string[] {
  if (isRecord(prev) && isRecord(next)) {
    const keys = new Set([...Object.keys(prev), ...Object.keys(next)]);
    return [...keys].sort().flatMap((key) => changedKeys(prev[key], next[key], path === '' ? key : `${path}.${key}`));
  }
  return JSON.stringify(prev) === JSON.stringify(next) ? [] : [path];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
