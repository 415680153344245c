// A real browser for tests: the system's headless Chromium (Debian package
// `chromium`; .ci/run installs it) driven by playwright-core, which never
// downloads a browser. Pages are served from a tiny static server on their own
// origin (http://localhost:PORT), so every call a page makes to a node or a
// proxy on 127.0.0.1 is cross-origin, as a web wallet's is.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Flags that work on a closed network: nothing of Chromium's own goes out. */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long any one thing in a page may take before the test gives up on it. */
export const PAGE_STEP_MS = 30_000;

/** CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path))
    throw new Error(`no Chromium at ${path}: install the Debian package chromium (.ci/run does), or set CHROMIUM_PATH`);
  return path;
}

/**
 * One headless Chromium. Playwright gives it a fresh, empty --user-data-dir of
 * its own (removed on close) and the --headless flag.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_FLAGS, timeout: 60_000 });
}

/** A fresh context (no HTTP or preflight cache shared with another run) and a page on it; console errors go to `log`. */
export async function openPage(
  browser: Browser,
  url: string,
  log: string[] = [],
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  context.setDefaultTimeout(PAGE_STEP_MS);
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') log.push(message.text());
  });
  page.on('pageerror', (err) => log.push(String(err)));
  await page.goto(url);
  return { context, page };
}

/** A TypeScript entry bundled for the browser (the SDK's browser build included), as one ES module's text. */
export async function bundleForBrowser(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [resolve(entry)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

export interface StaticFile {
  type: string;
  body: string | Buffer;
}

export interface PageServer {
  /** http://localhost:PORT: another origin than anything on 127.0.0.1 */
  origin: string;
  close(): Promise<void>;
}

/** Serves `files` (path → file) on 127.0.0.1:0; anything else is 404. */
export async function servePages(files: Record<string, StaticFile>): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const file = files[(req.url ?? '/').split('?')[0]];
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A page that loads one module script and nothing else. */
export function modulePage(title: string, script: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><script type="module" src="${script}"></script></body></html>`;
}
