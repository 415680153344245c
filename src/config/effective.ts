// What `--check` prints: the effective config, every default filled in and every
// secret redacted, and the keys left unset. An unset key has no default because its
// absence is the setting (no Redis, no tenants, any chain), so it is named rather
// than left for the reader to notice missing.
import { stringify } from 'yaml';
import type { z } from 'zod';
import { redactSecrets } from './redact.js';
import { type Config, ConfigSchema } from './schema.js';

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: unknown): Def => (schema as { def: Def }).def;

/** The schema under the wrappers that do not change its shape; `optional`: one of them makes the key optional. */
function unwrap(schema: z.ZodType): { inner: z.ZodType; optional: boolean } {
  let inner = schema;
  let optional = false;
  for (;;) {
    const def = defOf(inner);
    if (def.type === 'optional') optional = true;
    if (['optional', 'default', 'prefault', 'nullable'].includes(def.type)) inner = def.innerType as z.ZodType;
    else if (def.type === 'pipe') inner = def.in as z.ZodType;
    else return { inner, optional };
  }
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The dotted paths (`upstreams.0.maxRps`) of the optional keys `value` leaves out. */
function unsetKeys(schema: z.ZodType, value: unknown, path = ''): string[] {
  const { inner } = unwrap(schema);
  const def = defOf(inner);
  if (def.type === 'array' && Array.isArray(value))
    return value.flatMap((item, index) => unsetKeys(def.element as z.ZodType, item, `${path}.${index}`));
  // A mapping among other forms (tenants.anonymous: false or a mapping).
  if (def.type === 'union') {
    const mapping = (def.options as z.ZodType[]).find((option) => defOf(unwrap(option).inner).type === 'object');
    return mapping === undefined || !isMapping(value) ? [] : unsetKeys(mapping, value, path);
  }
  if (def.type !== 'object' || !isMapping(value)) return [];
  return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([key, child]) => {
    const at = path === '' ? key : `${path}.${key}`;
    if (value[key] === undefined) return unwrap(child).optional ? [at] : [];
    return unsetKeys(child, value[key], at);
  });
}

/** `--check`'s output for a valid config read from `source`. */
export function checkReport(config: Config, source: string): string {
  const unset = unsetKeys(ConfigSchema, config);
  const lines = [
    `# ${source}: valid. The effective config (environment applied, defaults filled in, secrets redacted).`,
    ...(unset.length === 0
      ? []
      : [
          '# Unset, each meaning what its absence says in docs/configuration.md:',
          ...wrap(unset.join(', '), 96).map((line) => `#   ${line}`),
        ]),
  ];
  return `${lines.join('\n')}\n${stringify(redactSecrets(config))}`;
}

/** `text` in lines of at most `width`, broken after a comma. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return line === '' ? lines : [...lines, line];
}
