// What reached the node: tests assert on these (e.g. "the proxy called the node
// once"), never on log lines. Every request is counted, faulted ones too.
import type { IncomingHttpHeaders } from 'node:http';
import { SIM_ROUTES, type SimRoute } from './routes.js';

export interface SimRecordedRequest {
  method: string;
  /** path and query as sent */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface SimCounters {
  total: number;
  byRoute: Record<SimRoute, number>;
  /** the last SIM_REQUEST_LOG_SIZE requests, oldest first */
  requests: SimRecordedRequest[];
  reset(): void;
}

const SIM_REQUEST_LOG_SIZE = 1000;

function zeroByRoute(): Record<SimRoute, number> {
  return Object.fromEntries(SIM_ROUTES.map((r) => [r, 0])) as Record<SimRoute, number>;
}

export class SimRequestCounters implements SimCounters {
  total = 0;
  byRoute = zeroByRoute();
  requests: SimRecordedRequest[] = [];

  record(route: SimRoute, request: SimRecordedRequest): void {
    this.total++;
    this.byRoute[route]++;
    this.requests.push(request);
    if (this.requests.length > SIM_REQUEST_LOG_SIZE) this.requests.shift();
  }

  reset(): void {
    this.total = 0;
    this.byRoute = zeroByRoute();
    this.requests = [];
  }
}
