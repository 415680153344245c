// `npm run setup` names what `npm test` lacks, with the package that brings it,
// and fails; on a machine with everything it says so and passes.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/setup.mjs');

function setup(env: Record<string, string>): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [SCRIPT], { env, encoding: 'utf8' });
  return { status: run.status, out: run.stdout + run.stderr };
}

describe('npm run setup', () => {
  it('names each missing tool with its Debian package, and fails', () => {
    const { status, out } = setup({ PATH: '/nonexistent', CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(status).toBe(1);
    for (const line of [
      'redis-server (Debian package redis-server)',
      'promtool (Debian package prometheus)',
      'amtool (Debian package prometheus-alertmanager)',
      'docker-compose (Debian package docker-compose)',
      'Chromium at /nonexistent/chromium',
    ])
      expect(out).toContain(line);
  });

  it('passes when nothing is missing', () => {
    // The test machine has every tool (.ci/run installs them).
    const { status, out } = setup({
      PATH: process.env.PATH ?? '',
      ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
    });
    expect(out).toContain('npm test has everything it needs.');
    expect(status).toBe(0);
  });
});
