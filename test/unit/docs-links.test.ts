// The docs must stand alone in a fresh clone: every relative link in README.md,
// docs/*.md and bench/README.md names a file that is in the repository, and none
// climbs out of it (README.md used to link ../shared/SPEC.md, outside the repo).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

const DOCS = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Targets of inline links and images, `[text](target)` and `![alt](target "title")`, outside code. */
export function linkTargets(markdown: string): string[] {
  const prose = markdown
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
  const targets: string[] = [];
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  for (const match of prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(match[1]);
  return targets;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** Why a link of `file` does not resolve inside the repository, or null when it does. */
function linkProblem(file: string, target: string): string | null {
  if (isExternal(target)) return null;
  const path = decodeURIComponent(target.split('#')[0]);
  if (path === '') return null; // an anchor in the same file
  if (path.startsWith('/')) return 'absolute path: a link on GitHub must be relative';
  const resolved = resolve(dirname(join(ROOT, file)), path);
  const inRepo = relative(ROOT, resolved);
  if (inRepo.startsWith('..') || inRepo.split(sep).includes('node_modules')) return 'points outside the repository';
  if (!existsSync(resolved)) return 'no such file in the repository';
  return null;
}

describe('documentation links', () => {
  it('finds the links of a markdown text, not those in code', () => {
    const text =
      'See [a](docs/a.md) and ![b](img/b.svg "B").\n[ref]: ../x.md\n```sh\n[c](nope.md)\n```\nand `[d](e.md)` [f](https://example.com)';
    expect(linkTargets(text)).toEqual(['docs/a.md', 'img/b.svg', 'https://example.com', '../x.md']);
    expect(linkProblem('README.md', '../shared/SPEC.md')).toBe('points outside the repository');
    expect(linkProblem('docs/api.md', '../README.md#quickstart')).toBeNull();
    expect(linkProblem('README.md', 'docs/missing.md')).toBe('no such file in the repository');
  });

  it.each(DOCS)('%s links only to files inside the repository', (file) => {
    const problems = linkTargets(readFileSync(join(ROOT, file), 'utf8'))
      .map((target) => ({ target, problem: linkProblem(file, target) }))
      .filter(({ problem }) => problem !== null)
      .map(({ target, problem }) => `${target}: ${problem}`);
    expect(problems).toEqual([]);
  });

  it('README.md and docs/ link to the API contract and the design', () => {
    const readme = linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(readme).toEqual(expect.arrayContaining(['docs/api.md', 'docs/design.md', 'config/production.example.yaml']));
  });
});
