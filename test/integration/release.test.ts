// npm run release -- <version> (scripts/release.mjs), on a temporary repository
// holding this checkout's CHANGELOG.md, package.json and package-lock.json: a dry
// run changes nothing; a release sets the version, moves the Unreleased entries
// under the version with today's date, commits and tags; a release with nothing
// under Unreleased, or with a dirty tree, is refused.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FILES = ['CHANGELOG.md', 'package.json', 'package-lock.json', 'scripts/release.mjs'];
const IDENTITY = {
  GIT_AUTHOR_NAME: 'release test',
  GIT_AUTHOR_EMAIL: 'release@test.invalid',
  GIT_COMMITTER_NAME: 'release test',
  GIT_COMMITTER_EMAIL: 'release@test.invalid',
};

let repo: string;

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(command, args, { cwd: repo, env: { ...process.env, ...IDENTITY } }, (err, stdout, stderr) =>
      done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
    );
  });
}
const release = (...args: string[]) => run(process.execPath, ['scripts/release.mjs', ...args]);
const read = (file: string): string => readFileSync(join(repo, file), 'utf8');
/** The text under a `## ` heading of the changelog, up to the next one. */
const section = (changelog: string, heading: string): string => {
  const start = changelog.indexOf(`${heading}\n`);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const body = changelog.slice(start + heading.length + 1);
  const next = body.search(/^## \[/m);
  return (next < 0 ? body : body.slice(0, next)).trim();
};

beforeAll(async () => {
  repo = mkdtempSync(join(tmpdir(), 'ledger-proxy-release-'));
  mkdirSync(join(repo, 'scripts'));
  for (const file of FILES) copyFileSync(join(ROOT, file), join(repo, file));
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '.'],
    ['commit', '-q', '-m', 'start'],
  ])
    expect((await run('git', args)).code, args.join(' ')).toBe(0);
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('npm run release', () => {
  const today = new Date().toISOString().slice(0, 10);

  it('--dry-run prints the section it would make and changes nothing', async () => {
    const before = FILES.map(read);
    const unreleased = section(before[0], '## [Unreleased]');
    expect(unreleased).not.toBe('');
    const { code, stdout } = await release('9.8.7', '--dry-run');
    expect(code).toBe(0);
    expect(stdout).toContain(`## [9.8.7] - ${today}\n\n${unreleased}`);
    expect(FILES.map(read)).toEqual(before);
    expect((await run('git', ['tag', '--list'])).stdout).toBe('');
  });

  it('sets the version, moves Unreleased under it, commits and tags', async () => {
    const unreleased = section(read('CHANGELOG.md'), '## [Unreleased]');
    const { code, stdout, stderr } = await release('9.8.7');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('v9.8.7');

    const changelog = read('CHANGELOG.md');
    expect(section(changelog, '## [Unreleased]')).toBe('');
    expect(section(changelog, `## [9.8.7] - ${today}`)).toBe(unreleased);
    expect(changelog.indexOf('## [Unreleased]')).toBeLessThan(changelog.indexOf('## [9.8.7]'));
    expect(JSON.parse(read('package.json')).version).toBe('9.8.7');
    const lock = JSON.parse(read('package-lock.json'));
    expect([lock.version, lock.packages[''].version]).toEqual(['9.8.7', '9.8.7']);

    expect((await run('git', ['status', '--porcelain'])).stdout).toBe('');
    expect((await run('git', ['log', '-1', '--format=%s'])).stdout.trim()).toBe('Release 9.8.7');
    expect((await run('git', ['describe', '--exact-match', 'HEAD'])).stdout.trim()).toBe('v9.8.7');
  });

  it('refuses a release with nothing under Unreleased, a tag that exists, a dirty tree or no version', async () => {
    const empty = await release('9.8.8');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('nothing under "## [Unreleased]"');
    expect((await release('9.8.7')).stderr).toContain('the tag v9.8.7 exists already');
    expect((await release('nine')).stderr).toContain('not a semantic version');
    expect((await release()).stderr).toContain('usage:');

    writeFileSync(
      join(repo, 'CHANGELOG.md'),
      read('CHANGELOG.md').replace('## [Unreleased]\n', '## [Unreleased]\n\n- a change\n'),
    );
    const dirty = await release('9.8.8');
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toContain('the working tree has changes');
    expect((await run('git', ['tag', '--list'])).stdout.trim()).toBe('v9.8.7');
  });
});
