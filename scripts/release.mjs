#!/usr/bin/env node
// npm run release -- <version> [--dry-run]
//
// Makes a release commit and its tag: the version in package.json and
// package-lock.json, CHANGELOG.md's Unreleased entries moved under
// `## [<version>] - <today, UTC>` with an empty Unreleased section left above
// them, one commit, and the annotated tag v<version>. It needs a clean working
// tree and something under Unreleased. --dry-run prints the new section, the
// commit and the tag, and changes nothing. Pushing is left to the person.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const CHANGELOG = join(ROOT, 'CHANGELOG.md');
const UNRELEASED = /^## \[Unreleased\][^\n]*\n/m;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$/;

function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}

function git(...args) {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/** The changelog with the Unreleased entries under `heading`, and those entries; throws when there are none. */
export function moveUnreleased(text, heading) {
  const start = UNRELEASED.exec(text);
  if (start === null) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  const bodyStart = start.index + start[0].length;
  const next = text.slice(bodyStart).search(/^## \[/m);
  const bodyEnd = next < 0 ? text.length : bodyStart + next;
  const entries = text.slice(bodyStart, bodyEnd).trim();
  if (entries === '') throw new Error('nothing under "## [Unreleased]" in CHANGELOG.md: a release lists its changes');
  const released = `${text.slice(0, bodyStart)}\n${heading}\n\n${entries}\n\n${text.slice(bodyEnd)}`;
  return { text: `${released.trimEnd()}\n`, entries };
}

function main(argv) {
  const dryRun = argv.includes('--dry-run');
  const [version, ...rest] = argv.filter((arg) => arg !== '--dry-run');
  if (version === undefined || rest.length > 0) fail('usage: npm run release -- <version> [--dry-run]');
  if (!SEMVER.test(version)) fail(`'${version}' is not a semantic version (such as 0.2.0)`);
  const tag = `v${version}`;
  if (git('tag', '--list', tag) !== '') fail(`the tag ${tag} exists already`);
  if (git('status', '--porcelain') !== '') fail('the working tree has changes: commit or remove them first');

  const today = new Date().toISOString().slice(0, 10);
  const heading = `## [${version}] - ${today}`;
  let moved;
  try {
    moved = moveUnreleased(readFileSync(CHANGELOG, 'utf8'), heading);
  } catch (err) {
    fail(err.message);
  }
  const message = `Release ${version}`;
  if (dryRun) {
    process.stdout.write(
      `release ${version} (dry run: nothing changed)\n\nCHANGELOG.md gets:\n\n${heading}\n\n${moved.entries}\n\n` +
        `then: npm version ${version} --no-git-tag-version --allow-same-version; ` +
        `git commit -m "${message}"; git tag -a ${tag} -m "${message}"\n`,
    );
    return;
  }
  writeFileSync(CHANGELOG, moved.text);
  // npm version sets package.json and package-lock.json alike.
  execFileSync('npm', ['version', version, '--no-git-tag-version', '--allow-same-version'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  git('add', 'CHANGELOG.md', 'package.json', 'package-lock.json');
  git('commit', '-q', '-m', message);
  git('tag', '-a', tag, '-m', message);
  process.stdout.write(
    `released ${version}: the commit and the tag ${tag} are made; push with git push --follow-tags\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
