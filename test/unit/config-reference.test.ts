// What is generated from the zod schema (`npm run gen:config`): the JSON Schema
// editors check a config file against, and docs/configuration.md. Each fails here
// when it is stale. The example configs point editors at the JSON Schema, and each
// is valid against it as well as through the loader.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../src/config/index.js';
import { LIVE_KEYS } from '../../src/process/reload.js';
import { editorJsonSchema, JSON_SCHEMA_FILE, jsonSchemaText } from '../../tools/config-reference/json-schema.js';
import { REFERENCE_FILE, referenceRows, referenceText } from '../../tools/config-reference/markdown.js';

const STALE = 'stale: run npm run gen:config and commit the result';

/** The facts line (type · default · env · reload) under a key's heading in the reference. */
const factsIn =
  (text: string) =>
  (key: string): string =>
    text.split(`\`${key}\`\n\n`)[1]?.split('\n')[0] ?? '';

describe('generated from the zod schema', () => {
  it(`${JSON_SCHEMA_FILE} is up to date`, () => {
    expect(readFileSync(JSON_SCHEMA_FILE, 'utf8'), STALE).toBe(jsonSchemaText());
  });

  it(`${REFERENCE_FILE} is up to date`, () => {
    expect(readFileSync(REFERENCE_FILE, 'utf8'), STALE).toBe(referenceText());
  });

  it('describes every key, with its default, env variable and whether a reload applies it', () => {
    const rows = referenceRows();
    expect(rows.length).toBeGreaterThan(70);
    expect(rows.filter((row) => typeof row.schema.description !== 'string').map((row) => row.path)).toEqual([]);
    const factsOf = factsIn(referenceText());
    expect(factsOf('server.port')).toBe('integer 0–65535 · default `8080` · env `LEDGER_PROXY_PORT` · reload: restart');
    expect(factsOf('cache.memory.maxBytes')).toContain('default `256MiB` (268435456)');
    expect(factsOf('cache.memory.maxBytes')).toContain('env `LEDGER_PROXY_MEMORY_MAX_BYTES`');
    expect(factsOf('upstreams[].url')).toBe('string · required · reload: **live**');
    expect(factsOf('tenants.costs')).toContain('view: 5');
    expect(factsOf('chainId')).toContain('default: unset');
  });

  it('says live for exactly the keys a reload applies, and those under them', () => {
    const factsOf = factsIn(referenceText());
    const live = referenceRows()
      .filter((row) => factsOf(row.path).includes('reload: **live**'))
      .map((row) => row.path);
    const under = (path: string): boolean =>
      LIVE_KEYS.some((key) => path.replaceAll('[]', '') === key || path.replaceAll('[]', '').startsWith(`${key}.`));
    expect(live.length).toBeGreaterThan(10);
    expect(live.filter((path) => !under(path))).toEqual([]);
    expect(referenceRows().filter((row) => under(row.path) && !live.includes(row.path))).toEqual([]);
    expect(live).toEqual(expect.arrayContaining(['log.level', 'upstreams[].headers', 'tenants.list[].keys']));
  });
});

const ajv = new Ajv({ allErrors: true, strict: true });
const validate = ajv.compile(editorJsonSchema());
const schemaErrors = (config: unknown): string[] =>
  validate(config) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);

/** The proxy configs of the repository: config/*.yaml and the Kubernetes ConfigMap's. */
function exampleConfigs(): Array<{ name: string; text: string; file?: string }> {
  const files = readdirSync('config')
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => join('config', name));
  const kubernetes = parseAllDocuments(readFileSync('deploy/kubernetes/ledger-proxy.yaml', 'utf8'))
    .map((doc) => doc.toJS())
    .find((doc) => doc?.kind === 'ConfigMap');
  return [
    ...files.map((file) => ({ name: file, text: readFileSync(file, 'utf8'), file })),
    { name: 'the Kubernetes ConfigMap', text: kubernetes.data['config.yaml'] as string },
  ];
}

// What the examples read from the environment (a tenant key, the admin token).
const ENV = { WALLET_KEY_2: 'a-rotated-key', ADMIN_TOKEN: 'a-token' };

describe('the example configs', () => {
  const examples = exampleConfigs();

  it('are found', () => {
    expect(examples.map((example) => example.name)).toEqual(
      expect.arrayContaining(['config/default.yaml', 'config/production.example.yaml', 'config/compose.yaml']),
    );
  });

  it.each(examples.filter((example) => example.file !== undefined))(
    '$name points editors at the JSON Schema on its first line',
    ({ text, file }) => {
      const match = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
      expect(match, 'the first line').not.toBeNull();
      expect(resolve(dirname(file!), match![1])).toBe(resolve(JSON_SCHEMA_FILE));
    },
  );

  it.each(examples)('$name is valid against the JSON Schema and through the loader', ({ text, file }) => {
    expect(schemaErrors(parse(text) ?? {})).toEqual([]);
    const config = file === undefined ? parseConfig(parse(text), ENV) : loadConfig({ file, env: ENV });
    expect(config.cache.memory.maxBytes).toBeGreaterThan(0);
  });
});

describe('the JSON Schema', () => {
  it('takes what the loader takes: sizes with units, the forms of workers and trustProxy, a tenant key by env', () => {
    const config = {
      server: { bodyLimitBytes: '8MiB', workers: 'auto', trustProxy: '10.0.0.0/8, loopback' },
      cache: { memory: { maxBytes: '1.5GiB' } },
      routing: { maxAnswerBytesInFlight: 268435456 },
      tenants: { anonymous: false, list: [{ name: 'a', keys: [{ env: 'KEY_A' }] }] },
    };
    expect(schemaErrors(config)).toEqual([]);
    expect(parseConfig(config, { KEY_A: 'k' }).cache.memory.maxBytes).toBe(1.5 * 1024 ** 3);
  });

  it.each([
    [{ cache: { memory: { maxBytes: '256MB' } } }, '/cache/memory/maxBytes'],
    [{ cache: { memory: { maxBytes: 0 } } }, '/cache/memory/maxBytes'],
    [{ server: { bodyLimitBytes: 64 * 1024 * 1024 + 1 } }, '/server/bodyLimitBytes'],
    [{ server: { workers: 0 } }, '/server/workers'],
    [{ server: { port: 70000 } }, '/server/port'],
    [{ server: { bogus: 1 } }, '/server'],
    [{ upstreams: [{ name: 'no-url' }] }, '/upstreams/0'],
    [{ upstreams: [{ url: 'fullnode.example' }] }, '/upstreams/0/url'],
    [{ cache: { redis: { url: 'http://redis:6379' } } }, '/cache/redis/url'],
    [{ tenants: { list: [{ name: 'a', keys: [{ plain: 'k' }] }] } }, '/tenants/list/0/keys/0'],
  ])('refuses %j at %s, as the loader does', (config, at) => {
    expect(schemaErrors(config).join('\n')).toContain(at);
    expect(() => parseConfig(config)).toThrow(/Invalid configuration/);
  });
});
