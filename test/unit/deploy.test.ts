// docker-compose.yml, the Dockerfile and config/compose.yaml must agree: ports,
// the config mount, and the Redis service the config names. docker-compose
// (Debian package docker-compose; no Docker engine needed) validates the file
// with every profile.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { requireTool, runTool } from '../helpers/monitoring-tools.js';

await requireTool('docker-compose', 'docker-compose');

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

  it('passes docker-compose config with every profile', async () => {
    const { code, out } = await runTool('docker-compose', [
      '-f',
      'docker-compose.yml',
      '--profile',
      'sim',
      '--profile',
      'monitoring',
      'config',
      '-q',
    ]);
    expect(code, out).toBe(0);
  });

  it('runs Alertmanager in the monitoring profile with the deploy config, and Prometheus sends alerts to it', () => {
    const alertmanager = compose.services.alertmanager;
    expect(alertmanager.profiles).toEqual(['monitoring']);
    const configFlag = (alertmanager.command as string[]).find((c) => c.startsWith('--config.file='))!.split('=')[1];
    expect(alertmanager.volumes).toContain(`./deploy/alertmanager/alertmanager.yml:${configFlag}:ro`);
    expect(compose.services.prometheus.depends_on).toContain('alertmanager');
    const prometheus = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8'));
    const port = (alertmanager.ports as string[])[0].split(':').at(-1);
    expect(prometheus.alerting.alertmanagers[0].static_configs[0].targets).toEqual([`alertmanager:${port}`]);
  });

  it('scrapes the admin listener by a name it answers (admin.allowedHosts), and the healthcheck by loopback, which it always answers', () => {
    const prometheus = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8'));
    const targets = prometheus.scrape_configs.find((job: { job_name: string }) => job.job_name === 'ledger-proxy')
      .static_configs[0].targets as string[];
    for (const target of targets) {
      const [host, port] = target.split(':');
      expect(compose.services[host], target).toBe(proxy);
      expect(Number(port), target).toBe(config.admin.port);
      expect(config.admin.allowedHosts, target).toContain(host);
    }
    expect(config.admin.host).toBe('0.0.0.0');
    expect(dockerfile).toMatch(/fetch\('http:\/\/127\.0\.0\.1:/);
  });
});
