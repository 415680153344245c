#!/usr/bin/env node
// `npm run setup`: says what `npm test` needs that this machine lacks, and how to
// get it, before a suite fails for it. Checks only; installs nothing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The executable `name` on the PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const problems = [];
const oldest = /(\d+)\.(\d+)\.(\d+)/.exec(pkg.engines.node);
const [major, minor] = process.versions.node.split('.').map(Number);
if (oldest && (major < Number(oldest[1]) || (major === Number(oldest[1]) && minor < Number(oldest[2]))))
  problems.push(`Node ${process.versions.node}: the proxy needs ${pkg.engines.node} (package.json engines)`);
if (!existsSync(join(root, 'node_modules', '.bin', 'vitest'))) problems.push('node_modules: run `npm ci`');

const tools = [
  ['redis-server', 'redis-server', 'every Redis suite starts its own on a free port'],
  ['promtool', 'prometheus', 'the alert rules, their unit tests and /metrics'],
  ['amtool', 'prometheus-alertmanager', "Alertmanager's config and routes"],
  ['docker-compose', 'docker-compose', 'the compose file, checked without a Docker engine'],
];
for (const [command, debian, why] of tools) {
  if (onPath(command) === undefined) problems.push(`${command} (Debian package ${debian}): ${why}`);
}
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(chromium))
  problems.push(`Chromium at ${chromium} (Debian package chromium, or set CHROMIUM_PATH): the browser tests`);
else if (spawnSync(chromium, ['--version'], { stdio: 'ignore' }).status !== 0)
  problems.push(`${chromium} does not run (\`${chromium} --version\` failed): the browser tests`);

if (problems.length === 0) {
  console.log('npm test has everything it needs.');
} else {
  console.log(`npm test lacks ${problems.length === 1 ? 'one thing' : `${problems.length} things`}:`);
  for (const problem of problems) console.log(`  - ${problem}`);
  console.log(
    'On Debian or Ubuntu: apt-get install redis-server prometheus prometheus-alertmanager docker-compose chromium',
  );
  process.exitCode = 1;
}
