// docker-compose.yml, the Dockerfile and config/compose.yaml must agree: ports,
// the config mount, and the Redis service the config names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';

const compose = parse(readFileSync('docker-compose.yml', 'utf8'));
const dockerfile = readFileSync('Dockerfile', 'utf8');
const proxy = compose.services['ledger-proxy'];

describe('deployment files', () => {
  const configPath = proxy.command[proxy.command.indexOf('--config') + 1] as string;
  const mount = (proxy.volumes as string[]).find((v) => v.split(':')[1] === configPath);
  const config = loadConfig({ file: mount!.split(':')[0], env: {} });

  it('mounts the config file the command names', () => {
    expect(mount).toBeDefined();
    expect(mount!.endsWith(':ro')).toBe(true);
  });

  it('publishes the config ports: public on all interfaces, admin on loopback only', () => {
    const ports = proxy.ports as string[];
    expect(ports).toContain(`${config.server.port}:${config.server.port}`);
    expect(ports).toContain(`127.0.0.1:${config.admin.port}:${config.admin.port}`);
    expect(config.server.host).toBe('0.0.0.0');
    expect(dockerfile).toContain(`EXPOSE ${config.server.port} ${config.admin.port}`);
  });

  it('points the cache at the compose Redis, which evicts LRU under a memory cap', () => {
    const host = new URL(config.cache.redis!.url!).hostname;
    expect(compose.services[host]).toBeDefined();
    const command = (compose.services[host].command as string[]).join(' ');
    expect(command).toMatch(/--maxmemory \d+/);
    expect(command).toContain('--maxmemory-policy allkeys-lru');
    expect(proxy.depends_on).toContain(host);
  });

  it('keeps the simulated node service behind a profile, so plain `up` needs no node', () => {
    expect(compose.services.sim.profiles).toEqual(['sim']);
    expect(config.upstreams.map((u) => u.url)).toEqual(['sim']);
  });

  it('runs as a non-root user with a healthcheck on /healthz and production dependencies only', () => {
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toContain('/healthz');
    expect(dockerfile).toContain('npm ci --omit=dev');
  });
});
