// The docs must stand alone in a fresh clone: every relative link in README.md,
// docs/**/*.md and bench/README.md names a file that is in the repository, none
// climbs out of it (a link to ../shared/SPEC.md would work only beside our checkout),
// and a link to a heading (`page.md#anchor`, `#anchor`) names a heading that page
// has, by GitHub's rules for heading ids. README.md links every docs page, so a
// reader who starts there finds each one. Every alert has its runbook: a section
// of the troubleshooting page whose id is the alert's name in lower case.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every markdown file under `dir` (relative to the repository), subfolders included. */
function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

const PAGES = markdownUnder('docs');
const DOCS = ['README.md', 'bench/README.md', ...PAGES];

/** Markdown without its fenced code blocks, where nothing is a link or a heading. */
const withoutFences = (markdown: string): string => markdown.replace(/^ {0,3}(```|~~~)[\s\S]*?^ {0,3}\1/gm, '');

/** Targets of inline links and images, `[text](target)` and `![alt](target "title")`, outside code. */
export function linkTargets(markdown: string): string[] {
  const prose = withoutFences(markdown).replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
  const targets: string[] = [];
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  for (const match of prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(match[1]);
  return targets;
}

/**
 * The ids GitHub gives the headings of a markdown text: the heading's text (links
 * as their text, no markup) in lower case, every character but letters, digits,
 * `_`, `-` and spaces dropped, spaces as `-`; a repeated id gets `-1`, `-2`, ….
 */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences(markdown).matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const text = match[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** Why a link of `file` does not resolve inside the repository, or null when it does. */
function linkProblem(file: string, target: string): string | null {
  if (isExternal(target)) return null;
  const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(rawPath);
  if (path.startsWith('/')) return 'absolute path: a link on GitHub must be relative';
  const resolved = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
  const inRepo = relative(ROOT, resolved);
  if (inRepo.startsWith('..') || inRepo.split(sep).includes('node_modules')) return 'points outside the repository';
  if (!existsSync(resolved)) return 'no such file in the repository';
  if (anchor !== undefined && resolved.endsWith('.md')) {
    if (!headingIds(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)))
      return `${inRepo} has no heading #${anchor}`;
  }
  return null;
}

describe('documentation links', () => {
  it('finds the links of a markdown text, not those in code', () => {
    const text =
      'See [a](docs/a.md) and ![b](img/b.svg "B").\n[ref]: ../x.md\n```sh\n[c](nope.md)\n```\nand `[d](e.md)` [f](https://example.com)';
    expect(linkTargets(text)).toEqual(['docs/a.md', 'img/b.svg', 'https://example.com', '../x.md']);
    expect(linkProblem('README.md', '../shared/SPEC.md')).toBe('points outside the repository');
    expect(linkProblem('docs/api.md', '../README.md')).toBeNull();
    expect(linkProblem('README.md', 'docs/missing.md')).toBe('no such file in the repository');
  });

  it('gives headings the ids GitHub gives them', () => {
    const text = [
      '# Cross-checking answers (`cache.verify`)',
      '## What is cached, per route',
      '## LedgerProxyNodeDown',
      '### Per route: A/B against the [keyed ceiling](x.md)',
      '## Sizing memory',
      '## Sizing memory',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n');
    expect([...headingIds(text)]).toEqual([
      'cross-checking-answers-cacheverify',
      'what-is-cached-per-route',
      'ledgerproxynodedown',
      'per-route-ab-against-the-keyed-ceiling',
      'sizing-memory',
      'sizing-memory-1',
    ]);
    expect(linkProblem('README.md', 'docs/api.md#no-such-heading')).toBe('docs/api.md has no heading #no-such-heading');
    expect(linkProblem('README.md', '#no-such-heading')).toBe('README.md has no heading #no-such-heading');
  });

  it('finds the pages in subfolders of docs/', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['docs/api.md', 'docs/operations/troubleshooting.md']));
  });

  it.each(DOCS)('%s links only to files inside the repository, and to headings they have', (file) => {
    const problems = linkTargets(readFileSync(join(ROOT, file), 'utf8'))
      .map((target) => ({ target, problem: linkProblem(file, target) }))
      .filter(({ problem }) => problem !== null)
      .map(({ target, problem }) => `${target}: ${problem}`);
    expect(problems).toEqual([]);
  });

  it('README.md links every docs page, bench/README.md and the example config', () => {
    const linked = new Set(
      linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8'))
        .filter((target) => !isExternal(target))
        .map((target) => target.split('#')[0]),
    );
    const missing = [...PAGES, 'bench/README.md', 'config/production.example.yaml'].filter((page) => !linked.has(page));
    expect(missing).toEqual([]);
  });

  it('every alert has a section on the troubleshooting page, and every runbook_url names one', () => {
    const page = 'docs/operations/troubleshooting.md';
    const ids = headingIds(readFileSync(join(ROOT, page), 'utf8'));
    const rules = readdirSync(join(ROOT, 'deploy'), { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.ya?ml$/.test(file) && !file.endsWith('.test.yml'))
      .flatMap((file) => {
        type Rules = { groups?: Array<{ rules?: Array<{ alert?: string; annotations?: Record<string, string> }> }> };
        // A Kubernetes file holds several documents; a PrometheusRule keeps its groups under spec.
        return parseAllDocuments(readFileSync(join(ROOT, 'deploy', file), 'utf8'))
          .map((doc) => doc.toJS() as (Rules & { spec?: Rules }) | null)
          .flatMap((doc) => [...(doc?.groups ?? []), ...(doc?.spec?.groups ?? [])])
          .flatMap((group) => group.rules ?? [])
          .filter((rule) => rule.alert !== undefined);
      });
    expect(rules.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const rule of rules) {
      const alert = rule.alert!;
      if (!ids.has(alert.toLowerCase())) problems.push(`${alert}: no "## ${alert}" on ${page}`);
      const runbook = rule.annotations?.runbook_url;
      if (runbook === undefined) continue;
      const anchor = runbook.split('#')[1];
      if (!runbook.split('#')[0].endsWith(page) || anchor === undefined || !ids.has(anchor))
        problems.push(`${alert}: runbook_url ${runbook} names no section of ${page}`);
    }
    expect(problems).toEqual([]);
  });
});
