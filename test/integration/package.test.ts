// The npm package as a release makes it: `npm pack` (its prepack builds dist/ and
// ships the lockfile as npm-shrinkwrap.json) in a copy of this checkout, then the
// tarball installed into an empty folder, as a consumer installs it (npm resolves
// the dependencies' ranges afresh there: neither our overrides nor the shrinkwrap
// reach it), without an EBADENGINE and with every installed package's engines
// covering ours, where `ledger-proxy` answers --version, --help and --check on
// each example config it ships; and installed as the Dockerfile's runtime stage
// installs it (unpacked, npm ci --omit=dev), where dist/main.js checks the config
// the image runs with. The package names where its docs are (repository,
// homepage, bugs): it ships none of docs/. Needs the npm registry (or the npm
// cache) for the dependencies.
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  files: string[];
  bin: Record<string, string>;
  engines: { node: string };
};

/** The project's public home, as package.json and the runbook template name it. */
const HOME = 'https://github.com/ledger-proxy/ledger-proxy';

/**
 * Every package installed under `root`/node_modules whose engines.node does not
 * cover all of `ours` (a Node version we state we run on that it refuses).
 */
function enginesNotCovering(root: string, ours: string): string[] {
  const refusing: string[] = [];
  const walk = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dir = join(modules, entry.name);
      if (entry.name.startsWith('@')) {
        walk(dir);
        continue;
      }
      const manifest = join(dir, 'package.json');
      if (existsSync(manifest)) {
        const { name, version, engines } = JSON.parse(readFileSync(manifest, 'utf8')) as {
          name: string;
          version: string;
          engines?: { node?: string };
        };
        const range = engines?.node;
        if (range !== undefined && !semver.subset(ours, range, { includePrerelease: false }))
          refusing.push(`${name}@${version} needs node ${range}, not all of ${ours}`);
      }
      walk(join(dir, 'node_modules'));
    }
  };
  walk(join(root, 'node_modules'));
  return refusing;
}
/** What the package is made from, as the Dockerfile's build stage copies it. */
const SOURCES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  'UPGRADING.md',
  'src',
  'config',
];
const NPM_TIMEOUT_MS = 240_000;

let work: string;
let tarball: string;

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  // No LEDGER_PROXY_* of the environment may change what --check prints.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LEDGER_PROXY_')));
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd, env: { ...base, ...env }, timeout: NPM_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
    );
  });
}

const npm = (args: string[], cwd: string, loglevel: 'error' | 'warn' = 'error') =>
  run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', `--loglevel=${loglevel}`], cwd);

/** Every variable an example config names (`env: NAME`), set: --check refuses a key whose variable is unset. */
function variablesOf(file: string): Record<string, string> {
  const names = [...readFileSync(file, 'utf8').matchAll(/^\s*#?\s*(?:-\s*)?env:\s*([A-Za-z_][A-Za-z0-9_]*)/gm)];
  return Object.fromEntries(names.map(([, name]) => [name, `value-of-${name}`]));
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'ledger-proxy-package-'));
  const source = join(work, 'source');
  mkdirSync(source);
  for (const entry of SOURCES) cpSync(join(ROOT, entry), join(source, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'));
  const packed = await npm(['pack', '--pack-destination', work, '--json'], source);
  expect(packed.code, packed.stderr).toBe(0);
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string }>;
  tarball = join(work, filename);
  // postpack leaves no shrinkwrap behind in the checkout it packed.
  expect(existsSync(join(source, 'npm-shrinkwrap.json'))).toBe(false);
}, NPM_TIMEOUT_MS);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('ships dist/ (no source maps, no src/ or test/), the example configs, the license and the lockfile', async () => {
    const listed = await run('tar', ['-tzf', tarball], work);
    const files = listed.stdout.split('\n').filter((f) => f !== '');
    for (const file of [
      'package/package.json',
      'package/LICENSE',
      'package/README.md',
      'package/CHANGELOG.md',
      'package/UPGRADING.md',
      'package/npm-shrinkwrap.json',
      `package/${pkg.bin['ledger-proxy']}`,
      'package/dist/sim/main.js',
      'package/config/default.yaml',
      'package/config/compose.yaml',
      'package/config/production.example.yaml',
    ])
      expect(files, file).toContain(file);
    expect(files.filter((f) => /^package\/(src|test|bench|deploy)\/|\.map$/.test(f))).toEqual([]);
    // Its README links docs/, which it does not ship: the package names the repository they are in.
    const packed = await run('tar', ['-xzOf', tarball, 'package/package.json'], work);
    expect(JSON.parse(packed.stdout)).toMatchObject({
      homepage: `${HOME}#readme`,
      repository: { type: 'git', url: `git+${HOME}.git` },
      bugs: { url: `${HOME}/issues` },
    });
    // The config's JSON Schema, where the example configs point editors, ships once it is generated.
    expect(pkg.files).toContain('config/ledger-proxy.schema.json');
    if (existsSync(join(ROOT, 'config/ledger-proxy.schema.json')))
      expect(files).toContain('package/config/ledger-proxy.schema.json');
  });

  it(
    'installed into an empty folder, ledger-proxy answers --version, --help and --check on each example config',
    async () => {
      const folder = join(work, 'installed');
      mkdirSync(folder);
      writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'empty', private: true }));
      const installed = await npm(['install', tarball], folder, 'warn');
      expect(installed.code, installed.stderr).toBe(0);
      // Every version npm picked supports every Node we state: none warns here, nor on another Node we allow.
      expect(installed.stderr).not.toMatch(/EBADENGINE/);
      expect(enginesNotCovering(folder, pkg.engines.node)).toEqual([]);
      const bin = join(folder, 'node_modules', '.bin', 'ledger-proxy');

      const version = await run(bin, ['--version'], folder);
      expect(version.stdout).toBe(`ledger-proxy ${pkg.version}\n`);
      const help = await run(bin, ['--help'], folder);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: ledger-proxy/);
      expect(help.stdout).toContain('--check');

      const configs = join(folder, 'node_modules', 'ledger-proxy', 'config');
      for (const example of ['default.yaml', 'compose.yaml', 'production.example.yaml']) {
        const file = join(configs, example);
        const checked = await run(bin, ['--check', '--config', file], folder, variablesOf(file));
        expect(checked.code, `${example}: ${checked.stderr}`).toBe(0);
        expect(checked.stdout).toContain(`# ${file}: valid.`);
      }
    },
    NPM_TIMEOUT_MS,
  );

  it(
    "installed as the image installs it (unpacked, npm ci --omit=dev), it checks the image's config",
    async () => {
      const app = join(work, 'app');
      mkdirSync(app);
      expect((await run('tar', ['-xzf', tarball, '--strip-components=1', '-C', app], work)).code).toBe(0);
      const installed = await npm(['ci', '--omit=dev'], app, 'warn');
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stderr).not.toMatch(/EBADENGINE/);
      expect(enginesNotCovering(app, pkg.engines.node)).toEqual([]);
      // Production dependencies only.
      expect(existsSync(join(app, 'node_modules', 'vitest'))).toBe(false);
      const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
      const [, configPath] = /^CMD \["--config", "\/app\/([^"]+)"\]$/m.exec(dockerfile)!;
      const checked = await run(process.execPath, ['dist/main.js', '--check', '--config', configPath], app);
      expect(checked.code, checked.stderr).toBe(0);
    },
    NPM_TIMEOUT_MS,
  );
});
