// The docs must stand alone in a fresh clone: every relative link in README.md,
// docs/**/*.md and bench/README.md names a file that is in the repository, none
// climbs out of it (a link to ../shared/SPEC.md would work only beside our checkout),
// and a link to a heading (`page.md#anchor`, `#anchor`) names a heading that page
// has, by GitHub's rules for heading ids. README.md links every docs page, so a
// reader who starts there finds each one. Every alert has its runbook: a section
// of the troubleshooting page whose id is the alert's name in lower case.
// A file a comment of src/ names is in the repository too: a name with a folder
// (`lane/head.ts`, `http/server.ts`, `src/errors.ts`, `docs/api.md`) is found from
// the comment's own folder or one above it, up to the repository's root (src/ is
// one); a bare name (`guard.ts`)
// is the name of a file of src/ (`api.md`, `package.json`: of a file anywhere in
// the repository, as a .ts name would be too general there); a `*` in a name stands
// for any characters, and at least one file must match. Names ending in .js are
// build output or another package's files, and not looked for.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
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

/** Every file of the repository (relative to it), leaving out what git ignores or installs. */
function repositoryFiles(dir = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !UNTRACKED_DIRS.has(path)) files.push(...repositoryFiles(path));
    } else if (entry.isFile()) files.push(path);
  }
  return files;
}
const UNTRACKED_DIRS = new Set(['node_modules', 'dist', 'coverage', 'reports']);

const FILES = repositoryFiles().sort();
const SOURCES = FILES.filter((file) => file.startsWith('src/') && file.endsWith('.ts'));

/** The text of every comment of a TypeScript source, as the compiler reads them (never a string's or a regex's). */
export function commentsOf(source: string): string[] {
  const tree = ts.createSourceFile('comments.ts', source, ts.ScriptTarget.Latest, false);
  const comments = new Map<number, string>();
  const take = (ranges: ts.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) comments.set(range.pos, source.slice(range.pos, range.end));
  };
  const visit = (node: ts.Node): void => {
    take(ts.getLeadingCommentRanges(source, node.pos));
    take(ts.getTrailingCommentRanges(source, node.end));
    ts.forEachChild(node, visit);
  };
  visit(tree);
  take(ts.getLeadingCommentRanges(source, tree.endOfFileToken.pos));
  return [...comments].sort(([a], [b]) => a - b).map(([, text]) => text);
}

/** The file names a comment names: words ending in a source or docs extension, folders and `*` allowed. */
export function pathsNamed(comment: string): string[] {
  const names = comment.matchAll(
    /(?<![\w./@*-])((?:[\w.*-]+\/)*[\w*-][\w.*-]*\.(?:ts|mts|mjs|cjs|md|json|ya?ml))(?![\w/-])/g,
  );
  return [...names].map((match) => match[1]);
}

/** Files of other projects a comment names, by their path there. */
const ELSEWHERE = new Set([
  // aptos-core's staged format of the ledger's BCS types (src/writes/cursor.ts)
  'testsuite/generate-format/tests/staged/api.yaml',
]);

/** `name` as a test of a whole path: a `*` stands for any characters but `/`. */
const globOf = (name: string): RegExp =>
  new RegExp(`^${name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}$`);

/** Why `name`, named in a comment of `file` (a source of src/), names no file of the repository, or null. */
function namedFileProblem(file: string, name: string): string | null {
  if (ELSEWHERE.has(name)) return null;
  const test = globOf(name);
  if (name.includes('/')) {
    const bases: string[] = [];
    for (let dir = dirname(file); dir !== '.'; dir = dirname(dir)) bases.push(dir);
    bases.push('');
    const found = bases.some((base) => {
      const full = relative(ROOT, resolve(ROOT, base, name))
        .split(sep)
        .join('/');
      return full.includes('*') ? FILES.some((path) => globOf(full).test(path)) : FILES.includes(full);
    });
    return found ? null : `no such file from ${dirname(file)}/ or a folder above it`;
  }
  const among = name.endsWith('.ts') ? SOURCES : FILES;
  if (among.some((path) => test.test(basename(path)))) return null;
  return name.endsWith('.ts') ? 'no file of src/ has that name' : 'no file of the repository has that name';
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

  it('finds the file names of comments, not of code or strings, and knows which are stale', () => {
    const source = [
      '// see http/server.ts and `guard.ts`; Node.js, dist/main.js,',
      "const url = 'https://example.com/a.md'; // and docs/api.md",
      "const path = 'src/nowhere.ts';",
      '/** The pages of `bench/proc/*.mjs` and [api](../../docs/api.md). */',
    ].join('\n');
    expect(commentsOf(source).flatMap(pathsNamed)).toEqual([
      'http/server.ts',
      'guard.ts',
      'docs/api.md',
      'bench/proc/*.mjs',
      '../../docs/api.md',
    ]);
    const file = 'src/http/lane/lane.ts';
    for (const name of ['head.ts', 'http/server.ts', 'lane/head.ts', 'src/errors.ts', 'api.md', 'bench/proc/*.mjs'])
      expect(namedFileProblem(file, name), name).toBeNull();
    expect(namedFileProblem(file, 'admin-guard.ts')).toBe('no file of src/ has that name');
    expect(namedFileProblem(file, 'http/purge*.ts')).toBe('no such file from src/http/lane/ or a folder above it');
    expect(namedFileProblem(file, 'SPEC.md')).toBe('no file of the repository has that name');
  });

  it('the comments of src/ name only files that are in the repository', () => {
    expect(SOURCES.length).toBeGreaterThan(100);
    const problems = SOURCES.flatMap((file) =>
      commentsOf(readFileSync(join(ROOT, file), 'utf8'))
        .flatMap(pathsNamed)
        .map((name) => ({ name, problem: namedFileProblem(file, name) }))
        .filter(({ problem }) => problem !== null)
        .map(({ name, problem }) => `${file}: ${name}: ${problem}`),
    );
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
