// A simulated node and a proxy in front of it that live for a whole test file
// (beforeAll / afterAll), for the long fuzz and differential runs. proxy.ts's
// helpers clean up after each test, which would close them after the first one.
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/index.js';
import { startSim, type SimNode, type SimOptions } from '../../src/sim/index.js';

export interface Stack {
  node: SimNode;
  app: App;
  /** the proxy's base url, no trailing slash */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A sim (gzip on, as real nodes) and a proxy on 127.0.0.1:0 with `overrides` merged into its config. */
/** `moreNodes`: other nodes' urls, configured after the stack's own sim (node1, node2, …). */
export async function startStack(
  options: {
    sim?: SimOptions;
    overrides?: Record<string, unknown>;
    beforeProxy?: (node: SimNode) => void;
    moreNodes?: string[];
  } = {},
): Promise<Stack> {
  const node = await startSim({ gzip: true, ...options.sim });
  options.beforeProxy?.(node);
  let app: App;
  try {
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      upstreams: [
        { url: node.url, name: 'node0' },
        ...(options.moreNodes ?? []).map((url, i) => ({ url, name: `node${i + 1}` })),
      ],
      log: { level: 'silent' },
      ...options.overrides,
    });
    app = await buildApp(config, { logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  } catch (err) {
    await node.close();
    throw err;
  }
  const url = (await app.listen()).replace(/\/$/, '');
  return {
    node,
    app,
    url,
    port: Number(new URL(url).port),
    async close() {
      await app.close();
      await node.close();
    },
  };
}

/** A seed from `envName` when set (to replay a run), else a fresh one. */
export function seedFrom(envName: string): number {
  const raw = process.env[envName];
  if (raw !== undefined && raw !== '') {
    const seed = Number(raw);
    if (!Number.isSafeInteger(seed)) throw new Error(`${envName} must be an integer, got ${JSON.stringify(raw)}`);
    return seed | 0;
  }
  return (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
}

/** true when the long sizes were asked for (npm run test:long). */
export const LONG = process.env.LONG === '1' || process.env.LONG === 'true';

/** A small seeded PRNG (mulberry32): the same seed gives the same stream. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** uniform in [0, 1) */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** an integer in [lo, hi] */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(0, 255);
    return out;
  }
}
