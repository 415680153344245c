// The speed guard's baseline: the proxy as built from the commit that last wrote
// bench/budget.json, so the guard can run it beside this build in the same rounds.
// A ratio between two proxies measured together moves far less with the machine's
// load than one between the proxy and a server unlike it (the node:http ceiling).
//
// The commit's src/ and tsconfig files are taken with `git archive` (no worktree is
// registered in the repository) into a directory of the system's temp dir named by
// the commit and this checkout, compiled with this checkout's TypeScript against this
// checkout's node_modules (a link to them, so another checkout's build, whose link
// may outlive its checkout, is never reused), and kept for the next run. Dependencies are held fixed: the
// comparison is of our code, and a dependency the old code cannot run against
// shows as a baseline that does not start.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUDGET_PATH = 'bench/budget.json';
/** What the baseline's build needs from its commit. */
const SOURCES = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

const git = async (...args) => (await run('git', args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })).stdout.trim();

/**
 * The baseline's build: { commit, dist } (dist: the directory holding its app.js),
 * or { commit, dist: null, why } when it cannot be had: no git, the budget never
 * committed, a clone without that commit, or a build that fails.
 */
export async function baselineBuild({ log = () => {} } = {}) {
  let commit = null;
  try {
    commit = await git('log', '-1', '--format=%H', '--', BUDGET_PATH);
    if (commit === '') return { commit: null, dist: null, why: `${BUDGET_PATH} has no commit in this clone` };
    const checkout = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
    const dir = join(tmpdir(), 'ledger-proxy-baseline', `${commit}-${checkout}`);
    const dist = join(dir, 'dist');
    const done = join(dir, 'built');
    if (existsSync(done)) return { commit, dist };
    log(`  guard: building the baseline (${commit.slice(0, 12)}, the commit that last wrote ${BUDGET_PATH})`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const archive = join(dir, 'sources.tar');
    await git('archive', '--format=tar', `--output=${archive}`, commit, ...SOURCES);
    await run('tar', ['-xf', archive, '-C', dir]);
    rmSync(archive);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    writeFileSync(done, `${commit}\n`);
    return { commit, dist };
  } catch (err) {
    const output = [err.stdout, err.stderr].filter(Boolean).join(' ').trim().slice(0, 400);
    return { commit, dist: null, why: `${err.message.split('\n')[0]}${output ? `: ${output}` : ''}` };
  }
}
