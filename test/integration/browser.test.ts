// A web wallet in a real browser (headless Chromium): a page on its own origin
// runs the real Aptos SDK and plain fetch() against the sim directly and
// through the proxy. Against the sim the page gets what a node gives a browser
// (answers, but no header beyond the safelisted ones); through the proxy it gets
// the same answers, reads the ledger headers, X-Cache and the page cursor, and
// its repeated pinned calls never reach the node. One browser for the file.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simBalance, simResources, type SimNode } from '../../src/sim/index.js';
import { startDemoCli } from '../helpers/demo-cli.js';
import {
  bundleForBrowser,
  launchChromium,
  modulePage,
  openPage,
  PAGE_STEP_MS,
  type PageServer,
  servePages,
} from '../helpers/browser.js';
import { proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { within } from '../helpers/until.js';
import type { SdkOutcome, SeenReply, WalletPageInput, WalletPageResult } from '../helpers/wallet-page.js';

const START = 1000n;
const SIM = { vendor: 'aptos', chainId: 4, startVersion: START, pruneWindow: 200n } as const;
const OWNER = '0x' + '42'.repeat(32);
const INPUT = { owner: OWNER, pinned: 990, pruned: 500, txnVersion: 900 } satisfies Omit<WalletPageInput, 'base'>;
const PINNED_PAIRS = ['resource (JSON)', 'resource (BCS)', 'view (JSON)', 'transaction'];
const PASSTHROUGH = ['ledger info (passthrough)', 'gas price (passthrough)', 'unknown path'];

let browser: Browser;
let pages: PageServer;

beforeAll(async () => {
  const [script, launched] = await Promise.all([bundleForBrowser('test/helpers/wallet-page.ts'), launchChromium()]);
  browser = launched;
  pages = await servePages({
    '/': { type: 'text/html', body: modulePage('wallet reads', '/wallet-page.js') },
    '/wallet-page.js': { type: 'text/javascript', body: script },
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
});

/** What a page on its own origin gets from fetch() of each path on `base`: the status, or the error a refused reply becomes. */
async function fetchFromPage(
  base: string,
  calls: Array<[method: 'GET' | 'POST', path: string]>,
): Promise<Array<number | string>> {
  const { context, page } = await openPage(browser, `${pages.origin}/`);
  try {
    const run = async ({ base, calls }: { base: string; calls: Array<[string, string]> }) => {
      const out: Array<number | string> = [];
      for (const [method, path] of calls) {
        const init = { method, credentials: 'include', cache: 'no-store' } as RequestInit;
        if (method === 'POST')
          Object.assign(init, {
            headers: { 'content-type': 'application/json' },
            body: '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}',
          });
        out.push(
          await fetch(base + path, init).then(
            (res) => res.status,
            (err: unknown) => String(err),
          ),
        );
      }
      return out;
    };
    // page.evaluate itself never times out.
    return await within(page.evaluate(run, { base, calls }), PAGE_STEP_MS, `fetch() against ${base}`);
  } finally {
    await context.close();
  }
}

/** Opens the page in a fresh context and runs every call against `base`. */
async function runWalletPage(base: string): Promise<WalletPageResult> {
  const log: string[] = [];
  const { context, page } = await openPage(browser, `${pages.origin}/`, log);
  try {
    await page.waitForFunction(() => 'walletReads' in globalThis);
    const input: WalletPageInput = { ...INPUT, base };
    return await within(
      page.evaluate((arg) => (globalThis as any).walletReads(arg), input),
      2 * PAGE_STEP_MS,
      `the page against ${base}`,
    );
  } finally {
    await context.close();
  }
}

function sdk(result: WalletPageResult, name: string): SdkOutcome {
  return result.sdk.find((o) => o.name === name)!;
}

function reply(result: WalletPageResult, name: string): SeenReply {
  return result.fetches.find((r) => r.name === name)!;
}

/** How many requests reached `node` that `match` picks (paths %-decoded). */
function reached(
  node: SimNode,
  match: (method: string, path: string, contentType: string | undefined) => boolean,
): number {
  return node.counters.requests.filter((r) =>
    match(r.method, decodeURIComponent(r.url), r.headers['content-type'] as string | undefined),
  ).length;
}

/**
 * What the page got, without the headers: status and body of every fetch (of an
 * error, its code: a message may be in the proxy's own words), and every SDK
 * outcome but error text.
 */
function answers(result: WalletPageResult): unknown {
  const body = (r: SeenReply) => (r.status >= 400 ? (r.body as { error_code?: string }).error_code : r.body);
  return {
    sdk: result.sdk.map((o) => ({ name: o.name, value: o.value, error: o.error && { ...o.error, text: undefined } })),
    fetches: result.fetches.map((r) => ({ name: r.name, status: r.status, body: body(r) })),
  };
}

/** The repeated calls each reached `node` `times` times. */
function expectRepeatsReached(node: SimNode, times: number): void {
  const view = (type: string) =>
    reached(node, (m, p, t) => m === 'POST' && p === `/v1/view?ledger_version=${INPUT.pinned}` && t === type);
  expect({
    viewBcs: view('application/x.aptos.view_function+bcs'),
    viewJson: view('application/json'),
    // The proxy sends addresses in their long form: matched by the resource's name.
    resource: reached(
      node,
      (m, p) =>
        m === 'GET' &&
        /\/resource\/[0-9a-fx]+::coin::CoinStore</.test(p) &&
        p.endsWith(`?ledger_version=${INPUT.pinned}`),
    ),
    transaction: reached(node, (m, p) => m === 'GET' && p === `/v1/transactions/by_version/${INPUT.txnVersion}`),
    fetchedView: reached(node, (m, p) => m === 'POST' && p === `/v1/view?ledger_version=${INPUT.pinned - 5}`),
    fetchedTransaction: reached(
      node,
      (m, p) => m === 'GET' && p === `/v1/transactions/by_version/${INPUT.txnVersion - 1}`,
    ),
  }).toEqual({
    viewBcs: times,
    viewJson: times,
    resource: times,
    transaction: times,
    fetchedView: times,
    fetchedTransaction: times,
  });
}

function expectSdkAnswers(result: WalletPageResult): void {
  const balance = [String(simBalance(OWNER, BigInt(INPUT.pinned)))];
  for (const name of ['view (BCS body)', 'view (BCS body) again', 'viewJson', 'viewJson again'])
    expect(sdk(result, name)).toEqual({ name, value: balance });
  expect(sdk(result, 'getAccountResource again').value).toEqual(sdk(result, 'getAccountResource').value);
  expect(sdk(result, 'getAccountResource').value).toMatchObject({ coin: { value: expect.any(String) } });
  expect(sdk(result, 'getTransactionByVersion').value).toMatchObject({ version: String(INPUT.txnVersion) });
  expect(sdk(result, 'getTransactionByVersion again').value).toEqual(sdk(result, 'getTransactionByVersion').value);
  // A pruned version reaches the page as the SDK's own error type, with the node's code.
  expect(sdk(result, 'getAccountResource, pruned version').error).toMatchObject({
    aptosApiError: true,
    status: 410,
    errorCode: 'version_pruned',
  });
  for (const r of result.fetches) expect(r.status, `${r.name}: ${JSON.stringify(r.body)}`).toBeGreaterThan(0);
}

describe('a web wallet page in Chromium', { timeout: 90_000 }, () => {
  it('against the sim directly: every call succeeds, as against a node, but the page reads no ledger header, X-Cache or cursor', async () => {
    const node = await sim(SIM);
    const result = await runWalletPage(node.url);
    expectSdkAnswers(result);
    for (const r of result.fetches) {
      expect([r.name, r.xCache, r.cursor, Object.values(r.ledger).filter((v) => v !== null)]).toEqual([
        r.name,
        null,
        null,
        [],
      ]);
    }
    // Without the cursor the SDK stops after one page.
    expect(result.pages).toEqual([
      simResources('0x1', START)
        .map((r) => r.type)
        .slice(0, 2),
    ]);
    expectRepeatsReached(node, 2);
    // The node answered the browser's preflights itself.
    expect(reached(node, (m) => m === 'OPTIONS')).toBeGreaterThan(0);
  });

  it('through the proxy: the same answers, and the page reads the ledger headers, X-Cache and the cursor; repeats never reach the node', async () => {
    const direct = await sim(SIM);
    const behind = await sim(SIM);
    const front = await proxy([behind], { vendor: 'aptos', routing: QUIET_ROUTING });
    const [node, proxied] = [await runWalletPage(direct.url), await runWalletPage(front.url)];
    expectSdkAnswers(proxied);
    expect(answers(proxied)).toEqual(answers(node));
    for (const name of PINNED_PAIRS)
      expect([name, reply(proxied, name).xCache, reply(proxied, `${name} again`).xCache]).toEqual([
        name,
        'MISS',
        'HIT',
      ]);
    for (const name of PASSTHROUGH) expect([name, reply(proxied, name).xCache]).toEqual([name, 'BYPASS']);
    for (const r of proxied.fetches.filter((f) => f.status === 200)) {
      expect([r.name, r.ledger['ledger-version'], r.ledger['chain-id'], r.ledger['ledger-oldest-version']]).toEqual([
        r.name,
        String(START),
        '4',
        String(START - SIM.pruneWindow),
      ]);
    }
    expect(reply(proxied, 'pruned version').xCache).not.toBeNull();
    expect(reply(proxied, 'resources page (cursor)').cursor).toMatch(/^0x[0-9a-f]+$/);
    // The SDK follows the cursor it can now read, page after page.
    const types = simResources('0x1', START).map((r) => r.type);
    expect(proxied.pages.length).toBe(Math.ceil(types.length / 2));
    expect(proxied.pages.flat()).toEqual(types);
    expectRepeatsReached(behind, 1);
    // Preflights are the proxy's to answer.
    expect(reached(behind, (m) => m === 'OPTIONS')).toBe(0);
  });

  it("cors.origins without the page's origin, or cors.enabled false: the browser refuses every reply, passthrough and errors included", async () => {
    const node = await sim(SIM);
    const calls: Array<['GET' | 'POST', string]> = [
      ['GET', '/v1'],
      ['GET', '/v1/transactions/by_version/900'],
      ['POST', '/v1/view?ledger_version=990'],
      ['GET', '/v1/no/such/route'],
      ['GET', '/v1/accounts/0x1/resources?ledger_version=500'],
    ];
    const allowed = await proxy([node], { vendor: 'aptos', routing: QUIET_ROUTING, cors: { origins: [pages.origin] } });
    expect(await fetchFromPage(allowed.url, calls)).toEqual([200, 200, 200, 404, 410]);
    // The node's own CORS headers (it allows any origin) must not reach the page through the proxy.
    const elsewhere = await proxy([node], {
      vendor: 'aptos',
      routing: QUIET_ROUTING,
      cors: { origins: ['https://wallet.example'] },
    });
    const off = await proxy([node], { vendor: 'aptos', routing: QUIET_ROUTING, cors: { enabled: false } });
    for (const refusing of [elsewhere, off])
      expect(await fetchFromPage(refusing.url, calls)).toEqual(calls.map(() => 'TypeError: Failed to fetch'));
  });
});

describe('npm run demo', { timeout: 90_000 }, () => {
  it("starts a proxy with a simulated node, serves the page on another origin, and the page's reads succeed in the browser: a miss, then a hit", async () => {
    const demo = await startDemoCli(['--port', '0']);
    try {
      expect(new URL(demo.pageUrl).origin).not.toBe(new URL(demo.proxyUrl).origin);
      const { context, page } = await openPage(browser, demo.pageUrl);
      try {
        await page.locator('body[data-state="done"], body[data-state="failed"]').waitFor();
        const summary = await page.locator('#summary').textContent();
        expect(await page.getAttribute('body', 'data-state'), summary ?? '').toBe('done');
        expect(summary).toMatch(
          /^0x1 holds \d+ octas of 0x1::aptos_coin::AptosCoin at ledger version \d+ \(chain 4\)\.$/,
        );
        const rows = await page
          .locator('#calls tr')
          .evaluateAll((trs) =>
            trs.map((tr) =>
              Array.from((tr as any).cells as ArrayLike<{ textContent: string }>, (td) => td.textContent),
            ),
          );
        // columns: #, call, status, X-Cache, tier, ledger version, ms
        expect(rows.map((r) => r.slice(1, 5))).toEqual([
          ['ledger info', '200', 'BYPASS', ''],
          ['balance', '200', 'MISS', ''],
          ['resources', '200', 'MISS', ''],
          ['balance, same version', '200', 'HIT', 'memory'],
          ['resources, same version', '200', 'HIT', 'memory'],
        ]);
        for (const r of rows) expect(r[5]).toMatch(/^\d+$/);
        expect(await page.locator('#resources').textContent()).toContain(
          '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>',
        );
      } finally {
        await context.close();
      }
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});
