// The JSON Schema of a config file, generated from the zod schema (src/config/),
// for editors: `# yaml-language-server: $schema=ledger-proxy.schema.json` at the top
// of a config file and the editor checks it as you type. It describes what a file
// may hold (zod's input side): a size may be written 256MiB, a key with a default
// may be left out. Checks that span keys (routing.deadlineMs >= attemptTimeoutMs,
// one of cache.redis.url and cluster) are the loader's alone.
import { z } from 'zod';
import { ConfigSchema } from '../../src/config/schema.js';

export const JSON_SCHEMA_FILE = 'config/ledger-proxy.schema.json';

export type JsonSchema = {
  [keyword: string]: unknown;
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
};

type Def = { type: string; defaultValue?: unknown };

export function configJsonSchema(): JsonSchema {
  const generated = z.toJSONSchema(ConfigSchema, {
    io: 'input',
    target: 'draft-07',
    // A z.custom has no JSON Schema of its own: it must give one in .meta(), checked below.
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const def = (zodSchema as unknown as { _zod: { def: Def } })._zod.def;
      // zod leaves out the default of a key whose value it transforms (a size, a
      // URL): the default is an output. Every default here is also valid input.
      if (def.type === 'default' && jsonSchema.default === undefined)
        jsonSchema.default = JSON.parse(JSON.stringify(def.defaultValue));
      // z.int()'s safe-integer range tells an editor nothing.
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  }) as JsonSchema;
  const untyped = untypedKeys(generated, '');
  if (untyped.length > 0)
    throw new Error(`keys without a JSON Schema (a z.custom needs one in .meta({ anyOf })): ${untyped.join(', ')}`);
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'ledger-proxy configuration',
    description:
      'A ledger-proxy config file (YAML). Generated from src/config/schema.ts by `npm run gen:config`; docs/configuration.md says what each key does.',
    ...rest,
  };
}

const TYPED = ['type', 'anyOf', 'const', 'enum', '$ref'];

/** Keys whose schema says nothing of their type: a z.custom() left without one. */
function untypedKeys(schema: JsonSchema, path: string): string[] {
  const own = path !== '' && !TYPED.some((keyword) => keyword in schema) ? [path] : [];
  const children = [
    ...Object.entries(schema.properties ?? {}).map(([key, child]) => untypedKeys(child, path ? `${path}.${key}` : key)),
    ...(schema.items ? [untypedKeys(schema.items, `${path}[]`)] : []),
    ...(schema.anyOf ?? []).map((option) => untypedKeys(option, path)),
  ];
  return [...own, ...children.flat()];
}

/**
 * A copy of `schema` in which every key may also be null: the loader reads an
 * empty key (`redis:` with everything under it commented out) as absent, so an
 * editor must not flag it.
 */
function allowingEmptyKeys(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  if (schema.properties !== undefined)
    copy.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([key, child]) => [key, orNull(allowingEmptyKeys(child))]),
    );
  if (schema.items !== undefined) copy.items = allowingEmptyKeys(schema.items);
  if (schema.anyOf !== undefined) copy.anyOf = schema.anyOf.map(allowingEmptyKeys);
  return copy;
}

function orNull(schema: JsonSchema): JsonSchema {
  if (schema.anyOf !== undefined) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  if (typeof schema.type === 'string') {
    const nullable: JsonSchema = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) nullable.enum = [...schema.enum, null];
    return nullable;
  }
  throw new Error(`a key's schema has neither a type nor anyOf: ${JSON.stringify(schema)}`);
}

/** The file editors read: the schema, with empty keys allowed. */
export function editorJsonSchema(): JsonSchema {
  return allowingEmptyKeys(configJsonSchema());
}

export function jsonSchemaText(): string {
  return `${JSON.stringify(editorJsonSchema(), null, 2)}\n`;
}
