// deploy/kubernetes/ledger-proxy.yaml, checked without a cluster or a network:
// each object against the Kubernetes API schemas (kubernetes-models, from npm:
// its validators are compiled from the Kubernetes OpenAPI schemas and ship in
// the package), field names strictly (a misspelt key is a TypeScript excess
// property in the package's types), the ConfigMap's config against the proxy's
// own schema, and the parts that must agree: probes on the admin listener, the
// preStop sleep equal to server.drainDelayMs, a grace period that covers the
// whole shutdown, memory sized by the formula of docs/operations/deploy.md, the admin port open to
// Prometheus only, and a purge token from a Secret.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/config/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const FILE = 'deploy/kubernetes/ledger-proxy.yaml';
const MIB = 1024 * 1024;

/** A manifest as plain YAML: read by path, checked by the schemas above. */
type Manifest = Record<string, any>;
const docs = parseAllDocuments(readFileSync(join(ROOT, FILE), 'utf8')).map((d) => d.toJS() as Manifest);
const byKind = (kind: string): Manifest => docs.find((d) => d.kind === kind)!;

const MODELS: Record<string, { module: string; name: string; validate(doc: Manifest): void }> = {
  ConfigMap: {
    module: 'kubernetes-models/v1/ConfigMap',
    name: 'ConfigMap',
    validate: (doc) => new ConfigMap(doc).validate(),
  },
  Deployment: {
    module: 'kubernetes-models/apps/v1/Deployment',
    name: 'Deployment',
    validate: (doc) => new Deployment(doc).validate(),
  },
  Service: { module: 'kubernetes-models/v1/Service', name: 'Service', validate: (doc) => new Service(doc).validate() },
  PodDisruptionBudget: {
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    name: 'PodDisruptionBudget',
    validate: (doc) => new PodDisruptionBudget(doc).validate(),
  },
  NetworkPolicy: {
    module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy',
    name: 'NetworkPolicy',
    validate: (doc) => new NetworkPolicy(doc).validate(),
  },
};

/** Bytes of a Kubernetes memory quantity (Mi, Gi, M, G or plain bytes). */
function bytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(quantity);
  if (m === null) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 1024, Mi: MIB, Gi: 1024 * MIB, k: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

describe(FILE, () => {
  const deployment = byKind('Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  // The keys the config reads from the container's environment (admin.token) hold some value; the LEDGER_PROXY_ overrides are not applied here.
  const env = Object.fromEntries(
    (container.env ?? [])
      .filter((e: { name: string }) => !e.name.startsWith('LEDGER_PROXY_'))
      .map((e: { name: string; value?: string }) => [e.name, e.value ?? 'from-a-secret']),
  );
  const config = parseConfig(parse(byKind('ConfigMap').data['config.yaml']), env);

  it('holds a ConfigMap, a Deployment, a Service, a PodDisruptionBudget and a NetworkPolicy, each valid against the Kubernetes schemas', () => {
    expect(docs.map((d) => d.kind)).toEqual([
      'ConfigMap',
      'Deployment',
      'Service',
      'PodDisruptionBudget',
      'NetworkPolicy',
    ]);
    for (const doc of docs) expect(() => MODELS[doc.kind].validate(doc), doc.kind).not.toThrow();
  });

  it('has no field the Kubernetes types do not know (TypeScript excess property checks)', async () => {
    const dir = join(ROOT, '.test-build', `kubernetes-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      const lines = docs.map((doc, i) => {
        const model = MODELS[doc.kind];
        return `import type { I${model.name} as M${i} } from '${model.module}';\nexport const object${i}: M${i} = ${JSON.stringify(doc)};`;
      });
      writeFileSync(join(dir, 'manifests.ts'), `${lines.join('\n')}\n`);
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const args = [
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        join(dir, 'manifests.ts'),
      ];
      const result = await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: ROOT }).then(
        () => '',
        (err: { stdout?: string }) => err.stdout ?? String(err),
      );
      expect(result).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs a config the proxy accepts, listening where the pod says', () => {
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.admin.host).toBe('0.0.0.0');
    const ports = Object.fromEntries(container.ports.map((p: Manifest) => [p.name, p.containerPort]));
    expect(ports).toEqual({ http: config.server.port, admin: config.admin.port });
    expect(container.args).toEqual(['--config', `${container.volumeMounts[0].mountPath}/config.yaml`]);
  });

  it('probes liveness on /healthz and readiness on /readyz, on the admin listener', () => {
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'admin' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'admin' });
  });

  it('lets only Prometheus in the monitoring namespace reach the admin port; the public port stays open', () => {
    const policy = byKind('NetworkPolicy').spec;
    expect(policy.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(policy.policyTypes).toEqual(['Ingress']);
    const rulesFor = (port: string): Manifest[] =>
      policy.ingress.filter((rule: Manifest) => rule.ports.some((p: Manifest) => p.port === port));
    const [publicRule, ...otherPublic] = rulesFor('http');
    expect(otherPublic).toEqual([]);
    expect(publicRule.from, 'the public port from anywhere').toBeUndefined();
    const [adminRule, ...otherAdmin] = rulesFor('admin');
    expect(otherAdmin).toEqual([]);
    // One peer with both selectors: Prometheus's pods, in that namespace only (not every pod there, nor every Prometheus).
    expect(adminRule.from).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
      },
    ]);
    const named = container.ports.map((p: Manifest) => p.name);
    for (const rule of policy.ingress) for (const { port } of rule.ports) expect(named).toContain(port);
  });

  it('lets a voluntary disruption take one pod at a time, never the last one', () => {
    const budget = byKind('PodDisruptionBudget').spec;
    expect(budget.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(budget.maxUnavailable).toBe(1);
    // A drain can make progress (one pod may go) and never empties the Service.
    expect(deployment.spec.replicas).toBeGreaterThan(budget.maxUnavailable);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it("is scraped by deploy/prometheus/kubernetes.yml: its relabelling finds the pod's /metrics on the admin port", () => {
    const prometheus = parse(readFileSync(join(ROOT, 'deploy/prometheus/kubernetes.yml'), 'utf8')) as Manifest;
    const [job] = prometheus.scrape_configs;
    expect(job.kubernetes_sd_configs).toEqual([{ role: 'pod' }]);
    // What Kubernetes service discovery gives for each container port of a pod of the Deployment.
    const annotations = deployment.spec.template.metadata.annotations as Record<string, string>;
    const discovered = container.ports.map((port: Manifest) => ({
      __address__: `10.1.2.3:${port.containerPort}`,
      __metrics_path__: '/metrics',
      __meta_kubernetes_pod_ip: '10.1.2.3',
      __meta_kubernetes_pod_name: 'ledger-proxy-7d9f-abcde',
      __meta_kubernetes_namespace: 'default',
      ...Object.fromEntries(
        Object.entries(annotations).map(([k, v]) => [
          `__meta_kubernetes_pod_annotation_${k.replace(/[^a-zA-Z0-9_]/g, '_')}`,
          v,
        ]),
      ),
    }));
    const targets = new Set(
      discovered
        .map((labels: Record<string, string>) => relabel(labels, job.relabel_configs))
        .filter((t: unknown) => t !== undefined)
        .map((t: Record<string, string>) => `${t.__address__}${t.__metrics_path__} ${t.instance}`),
    );
    expect([...targets]).toEqual([`10.1.2.3:${config.admin.port}/metrics ledger-proxy-7d9f-abcde`]);
    // A pod without the annotation is not scraped.
    const unannotated = { ...discovered[0], __meta_kubernetes_pod_annotation_prometheus_io_scrape: '' };
    expect(relabel(unannotated, job.relabel_configs)).toBeUndefined();
  });

  it('requires admin.token for purges, from a Secret the pod cannot start without', () => {
    expect(config.admin.token).toEqual({ env: 'ADMIN_TOKEN' });
    const variable = container.env.find((e: Manifest) => e.name === 'ADMIN_TOKEN');
    expect(variable.valueFrom.secretKeyRef).toEqual({ name: 'ledger-proxy-admin', key: 'token' });
    expect(readFileSync(join(ROOT, FILE), 'utf8')).toContain(
      'kubectl create secret generic ledger-proxy-admin --from-literal=token=',
    );
  });

  it('sleeps in preStop for server.drainDelayMs, and gives the whole shutdown time to finish', () => {
    const [sleep, seconds] = container.lifecycle.preStop.exec.command;
    expect(sleep).toBe('sleep');
    expect(Number(seconds) * 1000).toBe(config.server.drainDelayMs);
    expect(config.server.drainDelayMs).toBeGreaterThan(0);
    // A load balancer probing /readyz sees it fail within the drain delay.
    expect(
      container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold * 1000,
    ).toBeLessThanOrEqual(config.server.drainDelayMs);
    const shutdownMs = Number(seconds) * 1000 + config.server.drainDelayMs + config.server.shutdownTimeoutMs + 2000;
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(shutdownMs);
  });

  it('requests the memory of the sizing formula per worker, and limits it above that', () => {
    const workers = config.server.workers === 'auto' ? Number.NaN : config.server.workers;
    const maxBytes = config.cache.memory.maxBytes;
    const perWorker = 1.3 * maxBytes + 160 * MIB;
    expect(bytes(container.resources.requests.memory)).toBeGreaterThanOrEqual(workers * perWorker);
    expect(bytes(container.resources.limits.memory)).toBeGreaterThanOrEqual(bytes(container.resources.requests.memory));
    expect(readFileSync(join(ROOT, 'docs/operations/deploy.md'), 'utf8')).toContain(
      'RSS ≤ 1.3 × `cache.memory.maxBytes` + 160 MiB',
    );
  });
});

/** Prometheus relabelling (keep and replace, the actions the scrape job uses): the target's labels, or undefined when dropped. */
function relabel(labels: Record<string, string>, rules: Manifest[]): Record<string, string> | undefined {
  const out = { ...labels };
  for (const rule of rules) {
    const value = (rule.source_labels as string[]).map((l) => out[l] ?? '').join(rule.separator ?? ';');
    const match = new RegExp(`^(?:${rule.regex ?? '(.*)'})$`).exec(value);
    const action = rule.action ?? 'replace';
    if (action === 'keep') {
      if (match === null) return undefined;
    } else if (action === 'replace') {
      if (match === null) continue;
      const replacement = (rule.replacement ?? '$1') as string;
      out[rule.target_label] = replacement.replace(/\$(\d+)/g, (_, i: string) => match[Number(i)] ?? '');
    } else {
      throw new Error(`relabel action ${action} is not simulated here`);
    }
  }
  return out;
}

function parse(text: string): unknown {
  return parseAllDocuments(text)[0].toJS();
}
