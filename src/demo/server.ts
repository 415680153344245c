// startDemo: the demo page on its own origin, in front of a proxy. Without a
// proxy URL it starts one (vendor aptos, as the Aptos SDK expects) with the
// built-in simulated node behind it, both on free ports on 127.0.0.1.
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { buildApp, type App } from '../app.js';
import { parseConfig } from '../config/index.js';
import { demoPage } from './page.js';

export interface DemoOptions {
  /** a running proxy (http(s)://host:port, no /v1); absent: the demo starts its own with a simulated node */
  proxyUrl?: string;
  /** where the page is served; default 127.0.0.1 */
  host?: string;
  /** default 8088; 0: any free port */
  port?: number;
  /** the account the page reads first; default 0x1 */
  account?: string;
  logger: Logger;
}

export interface Demo {
  /** the page: http://host:port/ */
  pageUrl: string;
  proxyUrl: string;
  close(): Promise<void>;
}

export const DEMO_PORT = 8088;

/** A proxy of the demo's own, with the built-in simulated node (its ledger advancing) as the only upstream. */
async function startOwnProxy(logger: Logger): Promise<App> {
  const config = parseConfig({
    server: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    upstreams: [{ url: 'sim' }],
    sim: { host: '127.0.0.1', port: 0, versionsPerSecond: 2 },
    vendor: 'aptos',
    log: { level: 'warn' },
  });
  return buildApp(config, { logger });
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}

/** Starts the demo; close() stops the page and the proxy it started (a given proxy is left running). */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const own = options.proxyUrl === undefined ? await startOwnProxy(options.logger) : undefined;
  try {
    const proxyUrl = own !== undefined ? await own.listen() : options.proxyUrl!.replace(/\/+$/, '');
    const page = Buffer.from(demoPage({ proxyUrl, account: options.account ?? '0x1' }));
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' || (path !== '/' && path !== '/index.html')) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the demo page is at /\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
    });
    const host = options.host ?? '127.0.0.1';
    const port = await listen(server, host, options.port ?? DEMO_PORT);
    const close = async (): Promise<void> => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await own?.close();
    };
    return { pageUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`, proxyUrl, close };
  } catch (err) {
    await own?.close();
    throw err;
  }
}
