// CLI: `npm run demo [-- --proxy URL] [-- --port N]`: serves the demo page (and,
// without --proxy, a proxy and a simulated node of its own) until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { DEMO_PORT, startDemo } from './server.js';

const USAGE = `usage: node dist/demo/main.js [--proxy URL] [--port N] [--host H] [--account ADDRESS]
  --proxy URL        a running proxy (e.g. http://127.0.0.1:8080); default: start one with a simulated node
  --port N           the page's port (default ${DEMO_PORT}; 0: any free port)
  --host H           the page's address (default 127.0.0.1)
  --account ADDRESS  the account the page reads first (default 0x1)
`;

function fail(message: string): never {
  process.stderr.write(`demo: ${message}\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: { proxy?: string; port?: string; host?: string; account?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        proxy: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        account: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535))
    fail(`--port must be 0..65535: ${values.port}`);
  if (values.proxy !== undefined && !/^https?:\/\/[^/]+\/?$/.test(values.proxy))
    fail(`--proxy must be http(s)://host:port: ${values.proxy}`);
  const logger = pino({ name: 'demo' });
  const demo = await startDemo({ proxyUrl: values.proxy, port, host: values.host, account: values.account, logger });
  // One plain line a person (or a test) reads: where to point the browser.
  process.stdout.write(`demo page: ${demo.pageUrl} (proxy: ${demo.proxyUrl})\n`);
  const shutdown = (): void => {
    void demo.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`demo: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
