// An OTLP/HTTP collector in the test process: a server on 127.0.0.1:0 that keeps
// the spans a proxy's exporter POSTs (OTLP JSON), so tests assert on what an
// operator's collector would receive.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface CollectedSpan {
  /** service.name of the resource the span came with */
  service: string;
  traceId: string;
  spanId: string;
  /** absent for a span that starts its trace here */
  parentSpanId?: string;
  name: string;
  /** OTLP's: 1 internal, 2 server, 3 client */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's: 0 unset, 1 ok, 2 error */
  statusCode: number;
  statusMessage?: string;
}

export interface OtlpCollector {
  /** the base url to give as tracing.otlpEndpoint */
  url: string;
  /** every span received, in the order received */
  spans: CollectedSpan[];
  /** the request paths the exporter posted to */
  paths: string[];
  /** the spans of one trace */
  trace(traceId: string): CollectedSpan[];
}

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number; message?: string };
}
interface OtlpExport {
  resourceSpans: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans: Array<{ spans?: OtlpSpan[] }> }>;
}

function scalarOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.doubleValue ?? Number.NaN;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, scalarOf(a.value)]));
}

function spansOf(body: OtlpExport): CollectedSpan[] {
  return body.resourceSpans.flatMap((resource) => {
    const service = String(attributesOf(resource.resource?.attributes)['service.name']);
    return resource.scopeSpans.flatMap((scope) =>
      (scope.spans ?? []).map((s) => ({
        service,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId === '' ? undefined : s.parentSpanId,
        name: s.name,
        kind: s.kind,
        attributes: attributesOf(s.attributes),
        statusCode: s.status?.code ?? 0,
        statusMessage: s.status?.message,
      })),
    );
  });
}

/** `refuse`: answer every export with this status (a collector that does not take the spans) and keep nothing. */
export async function otlpCollector(options: { refuse?: number } = {}): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(req.url ?? '');
      if (options.refuse !== undefined)
        return res.writeHead(options.refuse, { 'content-type': 'application/json' }).end('{}');
      spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    paths,
    trace: (traceId) => spans.filter((s) => s.traceId === traceId),
  };
}
