// The runtime: package.json's engines, every installed package's engines and the
// Docker image agree. A clean `npm ci` on the oldest Node that engines allows
// (and on this machine's) prints no EBADENGINE, and the image runs a Node LTS
// line that still gets security fixes.
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};
const dockerfile = readFileSync('Dockerfile', 'utf8');

/**
 * End of life of the Node LTS lines (nodejs.org's release schedule). The image
 * must run a line still maintained today: when its date passes, this test fails
 * and the image moves to the next LTS line.
 */
const LTS_END_OF_LIFE: Record<number, string> = { 20: '2026-04-30', 22: '2027-04-30', 24: '2028-04-30' };

describe('runtime', () => {
  const oldest = semver.minVersion(pkg.engines.node)!;

  it('every package in the lock runs on the oldest Node that engines allows, and on this one', () => {
    const refusing = Object.entries(lock.packages).flatMap(([name, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (range === undefined) return [];
      return [oldest.version, process.versions.node]
        .filter((v) => !semver.satisfies(v, range))
        .map((v) => `${name} needs node ${range}, not ${v}`);
    });
    expect(refusing).toEqual([]);
  });

  it('this machine runs a Node that engines allows', () => {
    expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
  });

  it('the image runs a maintained Node LTS line that engines allows', () => {
    const lines = [...dockerfile.matchAll(/^FROM node:(\d+)[-.\w]*/gm)].map((m) => Number(m[1]));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const eol = LTS_END_OF_LIFE[line];
      expect(eol, `node ${line} is not an LTS line this test knows`).toBeDefined();
      expect(new Date().toISOString().slice(0, 10) < eol!, `node ${line} reached its end of life on ${eol}`).toBe(true);
      expect(semver.intersects(`^${line}`, pkg.engines.node), `node ${line} and engines ${pkg.engines.node}`).toBe(
        true,
      );
    }
  });
});
