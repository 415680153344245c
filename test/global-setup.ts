// One build of src/ for every test that runs the real CLI (node main.js, node
// sim/main.js), made before any test starts: compiling while load and latency
// tests run would starve them of CPU. Into a temp dir under the repo (so its
// imports find node_modules), never dist/, which `npm start` runs.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

const ROOT = resolve(import.meta.dirname, '..');

declare module 'vitest' {
  export interface ProvidedContext {
    /** the directory holding main.js and sim/main.js built from today's src/ */
    cliBuild: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  mkdirSync(join(ROOT, '.test-build'), { recursive: true });
  const build = mkdtempSync(join(ROOT, '.test-build', 'cli-'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', build], {
    cwd: ROOT,
    timeout: 170_000,
  });
  project.provide('cliBuild', build);
  return () => rmSync(build, { recursive: true, force: true });
}
