// config/production.example.yaml is the operators' reference: every key of the
// schema, each with its default. The key list is derived from the zod schema, so
// a key added to src/config/schema.ts without an example line fails here.
//
// The example's conventions (stated at its top):
//   key: value    # default D; ...   a production value, with the default D
//   # key: value  # ...              left at its default: the value shown is it
// `default none` marks a key without a default (unset unless given).
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { isMap, isPair, isScalar, isSeq, parse as parseYaml, parseDocument, type Node } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { loadConfig } from '../../src/config/index.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { parseSize } from '../../src/config/sizes.js';

const FILE = 'config/production.example.yaml';

interface SchemaLeaf {
  path: string;
  /** absent when the key has no default (optional, or required in its list entry) */
  default?: { value: unknown };
}

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { def: Def }).def;

/**
 * Every leaf key path of the schema ("cache.redis.url", "upstreams[].weight"), with
 * the default zod would fill in. Wrappers (default, prefault, optional, pipe from a
 * transform) are looked through; a record or an array of scalars is one leaf; a
 * union of mappings has the keys of each.
 */
export function schemaLeaves(schema: z.ZodType, path = ''): SchemaLeaf[] {
  let current = schema;
  let fallback: { value: unknown } | undefined;
  for (;;) {
    const def = defOf(current);
    if (def.type === 'default') fallback ??= { value: def.defaultValue };
    if (def.type === 'default' || def.type === 'prefault' || def.type === 'optional' || def.type === 'nullable') {
      current = def.innerType as z.ZodType;
    } else if (def.type === 'pipe') {
      current = def.in as z.ZodType;
    } else {
      break;
    }
  }
  const def = defOf(current);
  // A choice of mappings (a key given by sha256 or by env): the keys of every mapping.
  if (def.type === 'union') {
    const objects = (def.options as z.ZodType[]).filter((option) => defOf(option).type === 'object');
    if (objects.length > 0) return objects.flatMap((option) => schemaLeaves(option, path));
  }
  if (def.type === 'object') {
    return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([key, child]) =>
      schemaLeaves(child, path === '' ? key : `${path}.${key}`),
    );
  }
  if (def.type === 'array') {
    const items = schemaLeaves(def.element as z.ZodType, `${path}[]`);
    if (items.length !== 1 || items[0].path !== `${path}[]`) return items;
  }
  return [{ path, default: fallback }];
}

interface ExampleKey {
  path: string;
  line: number;
  /** the value as written (for a commented-out key, the default it shows) */
  value: unknown;
  /** the line was `# key: value`: a key left at its default */
  commented: boolean;
  /** the line's comment after the value, if any */
  comment: string;
}

// A key may have an underscore (raw_item) or be quoted ("POST /v1/transactions": tenants.costs), or
// start a list entry (`# - env: WALLET_KEY_2`: a tenant key left out).
const COMMENTED_KEY = /^(\s*)# ((?:- )?(?:[A-Za-z][A-Za-z0-9_]*|"[^"]+"):(?:\s.*)?)$/;

/** Every key of the example, the commented-out ones included, with its line. */
function exampleKeys(text: string): { keys: ExampleKey[]; errors: string[] } {
  const lines = text.split('\n');
  const commented = new Set<number>();
  const uncommented = lines.map((line, index) => {
    const match = COMMENTED_KEY.exec(line);
    if (match === null) return line;
    commented.add(index);
    return match[1] + match[2];
  });
  const doc = parseDocument(uncommented.join('\n'));
  const lineOf = (offset: number): number => uncommented.join('\n').slice(0, offset).split('\n').length - 1;
  const keys: ExampleKey[] = [];
  const visit = (node: unknown, path: string): void => {
    if (isSeq(node)) {
      for (const item of node.items) visit(item, `${path}[]`);
      return;
    }
    if (!isMap(node)) return;
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const keyPath = path === '' ? String(pair.key.value) : `${path}.${String(pair.key.value)}`;
      const line = lineOf((pair.key as Node).range?.[0] ?? 0);
      const text = uncommented[line];
      const hash = text.indexOf(' #');
      const value = pair.value === null ? null : (pair.value as Node).toJSON();
      keys.push({
        path: keyPath,
        line: line + 1,
        value,
        commented: commented.has(line),
        comment: hash < 0 ? '' : text.slice(hash + 2),
      });
      visit(pair.value, keyPath);
    }
  };
  visit(doc.contents, '');
  return { keys, errors: doc.errors.map((error) => error.message) };
}

/** `default D` in a line's comment: D read as YAML, `none` as no default. */
function statedDefault(comment: string): { value: unknown } | 'none' | undefined {
  const match = /\bdefault\s+([^\s;,)]+)/.exec(comment);
  if (match === null) return undefined;
  if (match[1] === 'none') return 'none';
  return { value: parseYaml(match[1]) };
}

/** A size written with its unit (256MiB) is the number of bytes the schema gives as a default. */
function sameValue(shown: unknown, schemaDefault: unknown): boolean {
  const size = typeof shown === 'string' && typeof schemaDefault === 'number' ? parseSize(shown) : undefined;
  return size?.ok === true ? size.bytes === schemaDefault : isDeepStrictEqual(shown, schemaDefault);
}

/** What is wrong with the example's lines for one schema leaf. */
function problemsOf(leaf: SchemaLeaf, lines: ExampleKey[]): string[] {
  if (lines.length === 0) return [`${leaf.path}: missing`];
  const problems: string[] = [];
  let shown = false;
  for (const line of lines) {
    const stated = statedDefault(line.comment);
    const where = `${leaf.path} (line ${line.line})`;
    if (stated === 'none') {
      if (leaf.default !== undefined)
        problems.push(`${where}: says default none, the schema's is ${JSON.stringify(leaf.default.value)}`);
      shown = true;
    } else if (stated !== undefined) {
      if (leaf.default === undefined) problems.push(`${where}: states a default the schema does not have`);
      else if (!sameValue(stated.value, leaf.default.value)) {
        problems.push(
          `${where}: says default ${JSON.stringify(stated.value)}, the schema's is ${JSON.stringify(leaf.default.value)}`,
        );
      }
      shown = true;
    } else if (line.commented) {
      if (leaf.default === undefined)
        problems.push(`${where}: commented out as a default, but the schema has none (say "default none")`);
      else if (!sameValue(line.value, leaf.default.value)) {
        problems.push(
          `${where}: shows ${JSON.stringify(line.value)} as its default, the schema's is ${JSON.stringify(leaf.default.value)}`,
        );
      }
      shown = true;
    }
  }
  if (!shown && leaf.default !== undefined) problems.push(`${leaf.path}: no line states its default`);
  return problems;
}

/** Every problem of an example text against the schema. */
function checkExample(text: string): string[] {
  const { keys, errors } = exampleKeys(text);
  if (errors.length > 0) return errors.map((error) => `not YAML once uncommented: ${error}`);
  const leaves = schemaLeaves(ConfigSchema);
  const problems = leaves.flatMap((leaf) =>
    problemsOf(
      leaf,
      keys.filter((key) => key.path === leaf.path),
    ),
  );
  // The other way round: a key (commented or not) the schema does not know, such as
  // a renamed key, is a stale line. Keys under a leaf (header names) are values.
  const known = (path: string): boolean =>
    leaves.some(
      (leaf) =>
        leaf.path === path ||
        leaf.path.startsWith(`${path}.`) ||
        leaf.path.startsWith(`${path}[]`) ||
        path.startsWith(`${leaf.path}.`),
    );
  for (const key of keys) if (!known(key.path)) problems.push(`${key.path} (line ${key.line}): not a config key`);
  return problems;
}

describe('config/production.example.yaml', () => {
  const text = readFileSync(FILE, 'utf8');

  it('derives the key list from the schema', () => {
    const leaves = schemaLeaves(ConfigSchema);
    const paths = leaves.map((leaf) => leaf.path);
    // A few known keys, so a walker that finds nothing cannot pass the test below.
    expect(paths).toEqual(
      expect.arrayContaining([
        'server.port',
        'upstreams[].url',
        'upstreams[].headers',
        'routing.breaker.openMs',
        'cache.redis.cluster',
        'shedding.shedFirst',
        'sim.chainId',
      ]),
    );
    expect(leaves.find((leaf) => leaf.path === 'shedding.budgetWaitMs')?.default).toEqual({ value: 50 });
    expect(leaves.find((leaf) => leaf.path === 'chainId')?.default).toBeUndefined();
    expect(paths.length).toBeGreaterThan(45);
  });

  it('has every schema key, each with its default', () => {
    expect(checkExample(text)).toEqual([]);
  });

  it('fails for a missing key, a wrong default and a stale key', () => {
    const dropped = text.replace(/^ {2}# budgetWaitMs: .*\n/m, '');
    expect(checkExample(dropped)).toContain('shedding.budgetWaitMs: missing');
    const wrongShown = text.replace('# maxAttempts: 3', '# maxAttempts: 4');
    expect(checkExample(wrongShown).join('\n')).toMatch(
      /routing\.maxAttempts .*shows 4 as its default, the schema's is 3/,
    );
    const wrongStated = text.replace(
      'maxBytes: 512MiB          # default 256MiB',
      'maxBytes: 512MiB          # default 1024',
    );
    expect(checkExample(wrongStated).join('\n')).toMatch(/cache\.memory\.maxBytes .*says default 1024/);
    const stale = text.replace('  # hedgeAfterMs: 0', '  # hedgeMs: 0');
    expect(checkExample(stale).join('\n')).toMatch(/routing\.hedgeMs .*not a config key/);
  });

  it('loads through the real loader, with no variable set: it checks clean as shipped', () => {
    const config = loadConfig({ file: FILE, env: {} });
    expect(config.shedding).toEqual({ maxInFlight: 10000, budgetWaitMs: 50, shedFirst: 'none' });
    expect(config.upstreams).toHaveLength(2);
  });
});
