// docs/configuration.md, generated: every key of the JSON Schema (itself generated
// from the zod schema), with its type, default, env variable, whether a reload
// applies it, and its description. The env variables come from src/config/env.ts
// and the reload answer from the list the app's reload appliers are held to.
import { stringify } from 'yaml';
import { ENV_OVERRIDES } from '../../src/config/env.js';
import { formatSize, SIZE_PATTERN } from '../../src/config/sizes.js';
import { reloadsLive } from '../../src/process/reload.js';
import { configJsonSchema, JSON_SCHEMA_FILE, type JsonSchema } from './json-schema.js';

export const REFERENCE_FILE = 'docs/configuration.md';

const INTRO = `<!-- Generated from src/config/ by \`npm run gen:config\`: edit the schema's .describe() texts, not this page. -->

# Configuration reference

The proxy reads one YAML file (\`ledger-proxy --config FILE\`). Every key is
optional: a key left out takes its default, and an empty key (\`redis:\` with
nothing under it) counts as left out. Unknown keys and bad values stop the proxy
at start, each named by its path (\`cache.memory.maxBytes: must be greater than 0\`).
\`ledger-proxy --check --config FILE\` checks a file as a start would and prints
the effective config, every default filled in and every secret redacted.
[\`config/production.example.yaml\`](../config/production.example.yaml) shows
every key with its default.

- **Environment variables** override the file's value of the key they name.
- **Sizes** (the keys ending in \`Bytes\`) take a whole number of bytes, or a
  number with a binary unit: \`512KiB\`, \`256MiB\`, \`1.5GiB\` (a fraction that
  comes to whole bytes). Decimal units (\`MB\`, \`GB\`) are refused: they are read
  as 1000-based by some and 1024-based by others. The environment takes the same
  forms.
- **Reload**: on SIGHUP the proxy reads the file again. The keys marked *live*
  take effect at once; a change to any other key is logged as needing a restart,
  and the running value stays until then. A file that is not valid changes
  nothing.
- **Editors**: a config file whose first line is
  \`# yaml-language-server: $schema=<path to ${JSON_SCHEMA_FILE}>\` is checked
  as you type (VS Code with the YAML extension, and any editor using
  yaml-language-server). The JSON Schema checks each value on its own; checks that
  span keys (\`routing.deadlineMs\` at least \`routing.attemptTimeoutMs\`, one of
  \`cache.redis.url\` and \`cache.redis.cluster\`) are made by \`--check\` and at start.
`;

export interface Row {
  path: string;
  schema: JsonSchema;
  required: boolean;
  depth: number;
}

const code = (text: string): string => `\`${text}\``;

const isSize = (schema: JsonSchema): boolean =>
  schema.anyOf?.some((option) => option.type === 'string' && option.pattern === SIZE_PATTERN) === true;

/** A union of single-key mappings ({sha256} or {env}): one value with several forms, not a section. */
const isKeyForms = (schema: JsonSchema): boolean =>
  (schema.anyOf ?? []).length > 0 &&
  (schema.anyOf ?? []).every((option) => Object.keys(option.properties ?? {}).length === 1);

/** The mapping whose keys are listed under a key: its own, a list entry's, or one form of a union. */
function mappingOf(schema: JsonSchema): JsonSchema | undefined {
  if (schema.properties !== undefined) return schema;
  if (schema.items?.properties !== undefined) return schema.items;
  if (isKeyForms(schema)) return undefined;
  return schema.anyOf?.find((option) => option.properties !== undefined);
}

/** Every key, depth first in the schema's order; a list entry's keys as `list[].key`. */
function rows(schema: JsonSchema, prefix: string, depth: number): Row[] {
  const mapping = mappingOf(schema);
  if (mapping === undefined) return [];
  const under = schema.items?.properties !== undefined ? `${prefix}[]` : prefix;
  return Object.entries(mapping.properties ?? {}).flatMap(([key, child]) => {
    const path = under === '' ? key : `${under}.${key}`;
    const row = { path, schema: child, required: mapping.required?.includes(key) === true, depth };
    return [row, ...rows(child, path, depth + 1)];
  });
}

/** An integer's or a number's range: `0–65535`, `≥ 1`, `> 0`. */
function range(schema: JsonSchema, integer: boolean): string {
  const exclusive = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const min = exclusive !== undefined && integer ? exclusive + 1 : schema.minimum;
  const max = schema.maximum;
  if (min !== undefined && max !== undefined) return ` ${min}–${max}`;
  if (min !== undefined) return ` ≥ ${min}`;
  if (exclusive !== undefined) return ` > ${exclusive}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return '';
}

/** `a`, `a or b`, `a, b or c`. */
const alternatives = (items: string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

/** The type of a value, in words. */
function typeOf(schema: JsonSchema): string {
  if (isSize(schema)) {
    const number = schema.anyOf?.find((option) => option.type === 'integer');
    const max = typeof number?.maximum === 'number' ? ` ≤ ${formatSize(number.maximum)}` : '';
    return `size${max} (bytes, or with KiB, MiB, GiB)`;
  }
  if (isKeyForms(schema))
    return alternatives((schema.anyOf ?? []).map((option) => code(`{${Object.keys(option.properties ?? {})[0]}: …}`)));
  if (schema.anyOf !== undefined) return alternatives(schema.anyOf.map(typeOf));
  if (schema.const !== undefined) return code(String(schema.const));
  if (Array.isArray(schema.enum)) return alternatives(schema.enum.map((value) => code(String(value))));
  switch (schema.type) {
    case 'integer':
      return `integer${range(schema, true)}`;
    case 'number':
      return `number${range(schema, false)}`;
    case 'string':
      return schema.minLength === 1 ? 'string, not empty' : 'string';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const item = schema.items?.properties !== undefined ? 'mapping' : typeOf(schema.items ?? {});
      const items = /^(string|mapping)$/.test(item) ? `${item}s` : item;
      return `list of ${items}${schema.minItems === 1 ? ', at least one' : ''}`;
    }
    case 'object':
      return typeof schema.additionalProperties === 'object'
        ? `mapping of names to ${typeOf(schema.additionalProperties)}`
        : 'mapping';
    default:
      return 'any';
  }
}

function shown(value: unknown, size: boolean): string {
  if (size && typeof value === 'number') return `${code(formatSize(value))} (${value})`;
  // YAML's flow style, as a file could write it.
  return code(stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trim());
}

/** The facts line of a key: type, default, env variable, reload. */
function facts(row: Row): string {
  const section = mappingOf(row.schema) !== undefined && row.schema.type === 'object';
  const env = ENV_OVERRIDES.filter((override) => override.path.join('.') === row.path).map((o) => code(o.name));
  const value = row.schema.default;
  const defaults =
    value !== undefined ? `default ${shown(value, isSize(row.schema))}` : row.required ? 'required' : 'default: unset';
  // A section's keys say each their own; a section applied whole says so too.
  if (section) return reloadsLive(row.path) ? 'reload: **live**, every key below' : '';
  const reload = reloadsLive(row.path) ? 'reload: **live**' : 'reload: restart';
  return [typeOf(row.schema), defaults, ...(env.length > 0 ? [`env ${env.join(', ')}`] : []), reload].join(' · ');
}

function entry(row: Row): string {
  const heading = `${row.depth === 0 ? '##' : '###'} ${code(row.path)}`;
  const parts = [facts(row), row.schema.description].filter((part) => typeof part === 'string' && part !== '');
  return `${heading}\n\n${parts.join('\n\n')}\n`;
}

/** Every key of the reference, in its order. */
export function referenceRows(): Row[] {
  return rows(configJsonSchema(), '', 0);
}

export function referenceText(): string {
  const all = referenceRows();
  const contents = all
    .filter((row) => row.depth === 0)
    .map((row) => `[${code(row.path)}](#${row.path.toLowerCase()})`)
    .join(' · ');
  return `${INTRO}\nKeys: ${contents}\n\n${all.map(entry).join('\n')}`;
}
