// The page a browser test runs: a web wallet's reads with the real Aptos SDK
// (bundled for the browser by test/helpers/browser.ts) and with plain fetch(),
// against one base URL on another origin. Everything it sees goes into one
// JSON result, so the test compares a run against the sim with a run through
// the proxy. It runs in Chromium: no Node API here.
import { jsonRequest } from '@aptos-labs/aptos-client';
import { Aptos, AptosApiError, AptosConfig, type Client, Network } from '@aptos-labs/ts-sdk';

export interface WalletPageInput {
  /** the node or proxy, http://host:port without /v1 */
  base: string;
  /** an account the sim holds, for its balance */
  owner: string;
  /** a version the ledger holds: pinned reads use it */
  pinned: number;
  /** a version below the oldest the ledger holds */
  pruned: number;
  /** a committed transaction's version */
  txnVersion: number;
}

/** One reply as a page sees it: only the headers CORS lets it read. */
export interface SeenReply {
  name: string;
  status: number;
  /** parsed JSON, or the bytes in hex for BCS */
  body: unknown;
  xCache: string | null;
  /** the seven ledger headers (null where unreadable) */
  ledger: Record<string, string | null>;
  cursor: string | null;
}

export interface SdkOutcome {
  name: string;
  value?: unknown;
  /** what the page caught: an AptosApiError's status and code, or any other error's text */
  error?: { aptosApiError: boolean; status?: number; errorCode?: string; text: string };
}

export interface WalletPageResult {
  sdk: SdkOutcome[];
  /** resource types of 0x1, page by page, following the cursor */
  pages: string[][];
  fetches: SeenReply[];
}

const PREFIX = 'x-aptos-';
const LEDGER = [
  'chain-id',
  'ledger-version',
  'ledger-oldest-version',
  'ledger-timestampusec',
  'epoch',
  'block-height',
  'oldest-block-height',
];
const COIN_STORE = '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>';

/**
 * The SDK's own browser client, with the reply's headers as a plain object: the
 * SDK reads its page cursor as `headers["x-aptos-cursor"]`, which a fetch
 * Headers object never answers, so without this the SDK stops after one page.
 */
const plainHeadersClient: Client = {
  provider: (async (request: Parameters<typeof jsonRequest>[0]) => {
    const reply = await jsonRequest(request);
    return { ...reply, headers: Object.fromEntries((reply.headers as unknown as Headers).entries()) };
  }) as unknown as Client['provider'],
};

async function outcome(name: string, call: () => Promise<unknown>): Promise<SdkOutcome> {
  try {
    return { name, value: await call() };
  } catch (err) {
    if (err instanceof AptosApiError) {
      const data = err.data as { error_code?: string } | undefined;
      return {
        name,
        error: { aptosApiError: true, status: err.status, errorCode: data?.error_code, text: err.message },
      };
    }
    return { name, error: { aptosApiError: false, text: String(err) } };
  }
}

/** The SDK calls, each pinned one made twice (the repeat is the proxy's to serve). */
async function sdkCalls(aptos: Aptos, input: WalletPageInput): Promise<SdkOutcome[]> {
  const balance = { function: '0x1::sim::balance' as const, functionArguments: [input.owner] };
  const pinned = { ledgerVersion: input.pinned };
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['view (BCS body)', () => aptos.view({ payload: balance, options: pinned })],
    ['viewJson', () => aptos.viewJson({ payload: balance, options: pinned })],
    [
      'getAccountResource',
      () => aptos.getAccountResource({ accountAddress: '0x1', resourceType: COIN_STORE, options: pinned }),
    ],
    ['getTransactionByVersion', () => aptos.getTransactionByVersion({ ledgerVersion: input.txnVersion })],
  ];
  const out: SdkOutcome[] = [];
  for (const [name, call] of calls) {
    out.push(await outcome(name, call));
    out.push(await outcome(`${name} again`, call));
  }
  out.push(
    await outcome('getAccountResource, pruned version', () =>
      aptos.getAccountResource({
        accountAddress: '0x1',
        resourceType: COIN_STORE,
        options: { ledgerVersion: input.pruned },
      }),
    ),
  );
  return out;
}

/** 0x1's resources two at a time, following the cursor the SDK reads off each reply. */
async function followCursor(base: string): Promise<string[][]> {
  const aptos = new Aptos(
    new AptosConfig({ network: Network.CUSTOM, fullnode: `${base}/v1`, client: plainHeadersClient }),
  );
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await aptos.getAccountResourcesPage({ accountAddress: '0x1', options: { limit: 2, cursor } });
    pages.push(page.resources.map((r) => r.type));
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 10);
  return pages;
}

async function seen(name: string, res: Response): Promise<SeenReply> {
  const type = res.headers.get('content-type') ?? '';
  const bytes = new Uint8Array(await res.arrayBuffer());
  const body = type.startsWith('application/json')
    ? JSON.parse(new TextDecoder().decode(bytes))
    : Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  const ledger = Object.fromEntries(LEDGER.map((h) => [h, res.headers.get(PREFIX + h)]));
  return {
    name,
    status: res.status,
    body,
    xCache: res.headers.get('x-cache'),
    ledger,
    cursor: res.headers.get(`${PREFIX}cursor`),
  };
}

/**
 * Plain fetch() calls with credentials, as the SDK makes them: hits and misses
 * (each pinned read twice), BCS, errors, and passthrough. `no-store`: the repeat
 * asks the server, so what it shows is the server's cache, never the browser's.
 */
async function fetchCalls(input: WalletPageInput): Promise<SeenReply[]> {
  const at = input.pinned - 5;
  const json = { 'content-type': 'application/json' };
  const view = JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [input.owner] });
  const calls: Array<[string, string, RequestInit?]> = [
    ['resource (JSON)', `/v1/accounts/0x1/resource/0x1::account::Account?ledger_version=${at}`],
    [
      'resource (BCS)',
      `/v1/accounts/0x1/resource/0x1::account::Account?ledger_version=${at}`,
      { headers: { accept: 'application/x-bcs' } },
    ],
    ['view (JSON)', `/v1/view?ledger_version=${at}`, { method: 'POST', headers: json, body: view }],
    ['transaction', `/v1/transactions/by_version/${input.txnVersion - 1}`],
  ];
  const out: SeenReply[] = [];
  const ask = async (name: string, path: string, init?: RequestInit): Promise<SeenReply> => {
    try {
      // `cache` is the browser's RequestInit, which Node's type leaves out.
      return await seen(
        name,
        await fetch(input.base + path, { credentials: 'include', cache: 'no-store', ...init } as RequestInit),
      );
    } catch (err) {
      // What a CORS refusal looks like to a page: a TypeError, no status.
      return { name, status: 0, body: String(err), xCache: null, ledger: {}, cursor: null };
    }
  };
  for (const [name, path, init] of calls) {
    out.push(await ask(name, path, init));
    out.push(await ask(`${name} again`, path, init));
  }
  const once: Array<[string, string, RequestInit?]> = [
    ['pruned version', `/v1/accounts/0x1/resources?ledger_version=${input.pruned}`],
    ['unknown path', '/v1/no/such/route'],
    ['ledger info (passthrough)', '/v1'],
    ['gas price (passthrough)', '/v1/estimate_gas_price', { headers: json }],
    ['resources page (cursor)', '/v1/accounts/0x1/resources?limit=2'],
  ];
  for (const [name, path, init] of once) out.push(await ask(name, path, init));
  return out;
}

/** Runs every call in turn: the SDK's, the cursor walk, then fetch(). */
async function walletReads(input: WalletPageInput): Promise<WalletPageResult> {
  const aptos = new Aptos(new AptosConfig({ network: Network.CUSTOM, fullnode: `${input.base}/v1` }));
  const sdk = await sdkCalls(aptos, input);
  const pages = await followCursor(input.base).catch((err: unknown) => [[`failed: ${String(err)}`]]);
  const fetches = await fetchCalls(input);
  return { sdk, pages, fetches };
}

(globalThis as { walletReads?: typeof walletReads }).walletReads = walletReads;
