// startSim: the simulated node on plain node:http (so faults such as a reset or a
// hang are direct socket operations). stop() is "killed", restart() comes back on
// the same port, close() is for good.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SimError } from './node-error.js';
import { simCors, withSimCors } from './cors.js';
import { simHeaderNames, simVendorNames } from './ledger-headers.js';
import { SimRequestCounters, type SimCounters } from './counters.js';
import { isFeedMode, SIM_DEFAULT_SLOW_MS, SimFaultInjector, type SimFault, type SimFaults } from './faults.js';
import { isHostile, writeHostile } from './hostile.js';
import { acceptsGzip, readBody, SIM_KEEP_ALIVE_MS, writeReply, type ReadBody } from './http-io.js';
import { SimSparseModel } from './sparse/model.js';
import { SimSparseState } from './sparse/state.js';
import type { SimSparseOptions } from './sparse/universe.js';
import { SimLedger, simUsecPerVersion, startAutoAdvance } from './state/ledger.js';
import { SimPeriodState } from './state/state-view.js';
import { errorReply, reply, type SimContext, type SimReply, type SimRequest } from './reply.js';
import { classifyRoute, dispatch } from './routes.js';
import { SIM_MAX_PAGE_SIZE } from './state/pages.js';
import { SimHistory, SimMempool } from './state/transactions.js';

export interface SimOptions {
  /** default 'node': header prefix x-node-, view BCS type application/x.node.view_function+bcs */
  vendor?: string;
  /** default 4 */
  chainId?: number;
  /** default 1000n: the latest ledger version at start */
  startVersion?: bigint;
  /** default 1_000_000n: oldest = max(0, latest - pruneWindow), never lowered */
  pruneWindow?: bigint;
  /**
   * default 0: the ledger advances only by hand (4 versions per second of chain time);
   * else an unref'd timer advances it, and its ledger timestamps keep the same pace
   */
  versionsPerSecond?: number;
  /** default 127.0.0.1 */
  host?: string;
  /** default 0 (any free port) */
  port?: number;
  /** default true: gzip answers when the request's Accept-Encoding allows gzip, as real nodes do */
  gzip?: boolean;
  /** default 'simulated': GET /v1's git_hash */
  gitHash?: string;
  /** default true: GET /accounts/{a} of a missing account is 200 with sequence number 0; false: 404 account_not_found */
  statelessAccounts?: boolean;
  /** default 9999: the node's max_account_{resources,modules}_page_size */
  maxPageSize?: number;
  /**
   * default { model: 'period' }: every value changes every SIM_VALUE_PERIOD versions, and the
   * BCS transaction feed is refused (403 api_disabled); 'sparse': a finite universe of keys
   * written now and then (SimSparseModel), listed exactly by the BCS feed's write sets
   */
  writes?: SimWritesOption;
}

export type SimWritesOption = { model: 'period' } | ({ model: 'sparse' } & SimSparseOptions);

export interface SimNode {
  /** http://HOST:PORT, no trailing slash, no /v1 */
  readonly url: string;
  readonly port: number;
  readonly ledger: SimLedger;
  readonly counters: SimCounters;
  readonly faults: SimFaults;
  /** submitted transactions: pending until the ledger reaches their version */
  readonly mempool: SimMempool;
  /** the sparse write model (its universe, what each version writes); null in the period model */
  readonly writes: SimSparseModel | null;
  /** stop listening and destroy open sockets: connections are refused afterwards */
  stop(): Promise<void>;
  /** listen again on the same port */
  restart(): Promise<void>;
  /** stop for good and clear timers */
  close(): Promise<void>;
}

const HTML_BODY = Buffer.from('<html><body>Bad Gateway</body></html>');

class SimServer implements SimNode {
  readonly ledger: SimLedger;
  readonly counters = new SimRequestCounters();
  readonly faults = new SimFaultInjector();
  readonly mempool = new SimMempool();
  readonly writes: SimSparseModel | null;
  readonly #ctx: SimContext;
  readonly #host: string;
  readonly #gzip: boolean;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #server: Server | null = null;
  #port: number;
  #stopAdvance: (() => void) | null = null;
  #closed = false;

  constructor(options: SimOptions) {
    const names = simVendorNames(options.vendor ?? 'node');
    this.ledger = new SimLedger(options);
    const writes = options.writes ?? { model: 'period' };
    this.writes =
      writes.model === 'sparse' ? new SimSparseModel(writes, simUsecPerVersion(options.versionsPerSecond)) : null;
    this.#ctx = {
      ledger: this.ledger,
      history: new SimHistory(this.ledger, this.mempool),
      state: this.writes === null ? new SimPeriodState() : new SimSparseState(this.writes),
      sparse: this.writes,
      names,
      headerNames: simHeaderNames(names.headerPrefix),
      gitHash: options.gitHash ?? 'simulated',
      statelessAccounts: options.statelessAccounts !== false,
      maxPageSize: options.maxPageSize ?? SIM_MAX_PAGE_SIZE,
    };
    this.#host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.#gzip = options.gzip !== false;
    if (options.versionsPerSecond !== undefined && options.versionsPerSecond !== 0) {
      this.#stopAdvance = startAutoAdvance(this.ledger, options.versionsPerSecond);
    }
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    const host = this.#host.includes(':') ? `[${this.#host}]` : this.#host;
    return `http://${host}:${this.#port}`;
  }

  async listen(): Promise<void> {
    if (this.#closed) throw new Error('the simulated node is closed');
    if (this.#server !== null) return;
    // requestTimeout 0: a 'hang' must really hang, not become Node's own 408.
    const server = createServer({ requestTimeout: 0, keepAliveTimeout: SIM_KEEP_ALIVE_MS }, (req, res) => {
      // Handlers turn every error into a reply; this only guards against a bug killing the process.
      this.#onRequest(req, res).catch(() => res.destroy());
    });
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.#host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (address !== null && typeof address === 'object') this.#port = address.port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await closed;
  }

  restart(): Promise<void> {
    return this.listen();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stopAdvance?.();
    this.#stopAdvance = null;
    await this.stop();
  }

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const route = classifyRoute(method, path, req.headers.accept);
    const read = await readBody(req);
    this.counters.record(route, { method, url, headers: req.headers, body: read.body });
    if (req.socket.destroyed) return;

    const request: SimRequest = {
      method,
      path,
      query: new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)),
      headers: req.headers,
      body: read.body,
    };
    const gzip = this.#gzip && acceptsGzip(req.headers['accept-encoding']);
    const answer = (): SimReply => this.#answer(request, read);
    const fault = this.faults.take(route, path);
    if (fault === null) writeReply(res, answer(), gzip);
    else if (isFeedMode(fault.mode))
      writeReply(res, this.#answer({ ...request, feedFault: { ...fault, mode: fault.mode } }, read), gzip);
    else this.#applyFault(fault, req, res, answer, gzip);
  }

  #answer(request: SimRequest, read: ReadBody): SimReply {
    // 411 is not an error status a node's body carries, so the body says 400's code.
    if (read.chunked)
      return errorReply(
        SimError.badRequest('Length Required: chunked request bodies are not accepted'),
        this.#ctx,
        undefined,
        411,
      );
    if (read.tooLarge) return errorReply(SimError.badRequest('request body is larger than the 8 MiB limit'), this.#ctx);
    // The body checks above sit outside a node's CORS layer: their refusals carry no CORS headers.
    return simCors(request, () => dispatch(request, this.#ctx));
  }

  #applyFault(fault: SimFault, req: IncomingMessage, res: ServerResponse, answer: () => SimReply, gzip: boolean): void {
    if (fault.mode !== 'slow' && fault.mode !== 'hang' && fault.delayMs !== undefined && fault.delayMs > 0) {
      // A node that takes its time to fail.
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.#applyFault({ ...fault, delayMs: undefined }, req, res, answer, gzip);
      }, fault.delayMs);
      this.#timers.add(timer);
      return;
    }
    if (isHostile(fault.mode)) return writeHostile(res, { ...fault, mode: fault.mode }, answer(), this.#ctx, gzip);
    switch (fault.mode) {
      case 'hang':
        return; // the socket stays open until the client gives up or stop()/close()
      case 'slow': {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          writeReply(res, answer(), gzip);
        }, fault.delayMs ?? SIM_DEFAULT_SLOW_MS);
        this.#timers.add(timer);
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      // html, 429 and empty come from something in front of the node: never compressed.
      case 'html':
        return writeReply(res, reply(502, 'text/html', HTML_BODY), false);
      case 'status500': {
        // The node's own error: shaped (and compressed) like any of its answers.
        const err = new SimError(500, 'internal_error', 'Internal error: simulated failure');
        return writeReply(res, withSimCors(req.headers, errorReply(err, this.#ctx, this.ledger.info())), gzip);
      }
      case 'status429':
        return writeReply(
          res,
          reply(429, 'text/plain', Buffer.from('Too Many Requests'), { 'retry-after': '1' }),
          false,
        );
      case 'empty':
        return writeReply(res, { status: 503, headers: {}, body: Buffer.alloc(0) }, false);
      case 'overloaded': {
        // Shed before the request reaches the API: no ledger headers, no CORS, not compressed.
        const shed = errorReply(
          new SimError(503, 'overloaded', 'Server is shedding load; please retry shortly'),
          this.#ctx,
        );
        if (fault.retryAfterSeconds !== undefined) shed.headers['retry-after'] = String(fault.retryAfterSeconds);
        return writeReply(res, shed, false);
      }
    }
  }
}

/** Starts a simulated node listening on options.host:options.port (port 0: any free port). */
export async function startSim(options: SimOptions = {}): Promise<SimNode> {
  const sim = new SimServer(options);
  try {
    await sim.listen();
  } catch (err) {
    await sim.close();
    throw err;
  }
  return sim;
}
