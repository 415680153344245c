// The public listener, composed: the writer, the parser and the read responder,
// the edge with its tenants and limits, the accounting, and the server with
// fastify behind the public entry for passthrough.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type RedisClientOptions, redisClient } from '../cache/redis/client.js';
import type { Config } from '../config/index.js';
import type { LedgerHeaderNames } from '../ledger/headers.js';
import type { LedgerInfo } from '../ledger/info.js';
import { asError } from '../process/log-error.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RouteDescriptor } from '../routes/route.js';
import { routeMatcher } from '../routes/table.js';
import type { ReadContext } from '../model/read-context.js';
import type { ReadResult } from '../model/read-result.js';
import type { Tracing } from '../tracing/scope.js';
import type { ReadRequest } from '../model/read.js';
import { requestAccounting } from '../reply/accounting.js';
import { clientAddressOf, trustedPeerOf } from '../edge/client-address.js';
import { Cors } from '../edge/cors.js';
import { NodeCosts } from '../edge/costs.js';
import { Edge } from '../edge/edge.js';
import { publicEntry } from '../http/entry.js';
import type { Exchange } from '../edge/exchange.js';
import { Limits, limitCounters } from '../edge/limits.js';
import { type PassthroughDeps, registerPassthrough } from '../http/passthrough.js';
import { ReadParser, spellingBytesFor } from '../responder/read-parser.js';
import { ReplyWriter } from '../reply/writer.js';
import { RequestIds } from '../edge/request-id.js';
import { type SdkClient, sdkClientOf } from '../edge/sdk-client.js';
import { ReadResponder } from '../responder/responder.js';
import { buildHttpServer } from '../http/server.js';
import { TenantDirectory } from '../edge/tenants.js';

export interface PublicListenerDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  headerNames: LedgerHeaderNames;
  routes: readonly RouteDescriptor[];
  /** the freshest snapshot the proxy knows, for its own errors */
  snapshot(): LedgerInfo | null;
  /** the read path (ReadThrough.read) */
  read(req: ReadRequest, context: ReadContext): ReadResult | Promise<ReadResult>;
  /** passthrough calls, through the pool */
  forward: PassthroughDeps['forward'];
  /** the share of node budget left, 0 to 1 (X-Proxy-Headroom) */
  headroom(): number;
  /** how Redis clients are made (cache.redis): the limits' counts are shared across instances through one; absent = counted per instance */
  redisClients?: RedisClientOptions;
  /** the clock of the limits' windows (tests freeze it) */
  now?: () => number;
  /** while tracing is on (tracing.otlpEndpoint): every request gets a span */
  tracing?: Tracing;
  /** where tenant keys given as `{env: VAR}` are read */
  env: NodeJS.ProcessEnv;
}

export interface PublicListener {
  http: FastifyInstance;
  tenants: TenantDirectory;
  /** after the listener closed: the counts this instance has not shared yet go out, then the counters' client closes */
  close(): void;
}

export async function buildPublicListener(deps: PublicListenerDeps): Promise<PublicListener> {
  const { config, logger, metrics } = deps;
  const writer = new ReplyWriter(deps.headerNames, deps.snapshot, (cause, reqId) =>
    logger.error({ reqId, err: asError(cause) }, 'internal error (the client got a 500 without its text)'),
  );
  const tenants = new TenantDirectory(config.tenants, deps.env);
  metrics.tenants.known(tenants.names());
  // The limits' counters fail fast, like the cache's client: a Redis outage skips counting.
  const counters =
    config.tenants !== undefined && deps.redisClients !== undefined
      ? redisClient(deps.redisClients, 'limits')
      : undefined;
  const limits = new Limits(
    limitCounters({
      keyPrefix: `${config.cache.redis?.keyPrefix ?? 'ledger-proxy:'}limits:`,
      redis: counters?.redis,
      now: deps.now,
    }),
  );
  const clientAddress = clientAddressOf(config.server.trustProxy);
  const edge = new Edge({
    cors: new Cors(config.cors, deps.headerNames),
    tenants,
    limits,
    costs: new NodeCosts(config.tenants?.costs),
    clientAddress,
    trustedPeer: trustedPeerOf(config.server.trustProxy),
    headroom: deps.headroom,
  });
  const account = requestAccounting(metrics, logger, clientAddress, edge);
  const parser = new ReadParser(routeMatcher(deps.routes), spellingBytesFor(config.cache.memory.maxBytes));
  const sdkClientHeader = (): string => deps.headerNames.client;
  const sdkClient = (exchange: Exchange): SdkClient | undefined => sdkClientOf(exchange.req.headers, sdkClientHeader());
  const responder = new ReadResponder({
    read: deps.read,
    nodeCallRefusal: (exchange) => edge.nodeWorkRefusal(exchange),
    sdkClient,
    parser,
    writer,
    account,
  });
  const http = await buildHttpServer({
    bodyLimitBytes: config.server.bodyLimitBytes,
    requestTimeoutMs: config.server.requestTimeoutMs,
    lane: config.server.lane,
    trustProxy: config.server.trustProxy,
    writer,
    entry: (next, connections) =>
      publicEntry(
        {
          requestIds: new RequestIds(config.server.trustRequestId),
          parser,
          responder,
          edge,
          account,
          bodyLimitBytes: config.server.bodyLimitBytes,
          connections,
          tracing: deps.tracing,
        },
        next,
      ),
    passthrough: config.passthrough
      ? (app) => registerPassthrough(app, { forward: deps.forward, writer, sdkClientHeader })
      : undefined,
  });
  const close = (): void => {
    limits.share();
    counters?.disconnect();
  };
  return { http, tenants, close };
}
