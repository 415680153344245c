// The span of one node attempt while tracing is on: which node, what it answered
// (its status, or why there was no answer to use), under the lookup's span or,
// for passthrough, the request's.
import { NodeError } from '../errors.js';
import { ATTR, SPAN, SpanKind, type TraceScope } from '../tracing/scope.js';
import type { NodeAnswer } from '../model/node-answer.js';
import { AttemptLog, attemptOf } from './call.js';
import type { NodeCall } from './transport/node-client.js';

/** One attempt as the failover loop makes it: `attempts` collects why it gave no answer to use. */
export type Attempt = (call: NodeCall, attempts: AttemptLog) => Promise<NodeAnswer | null>;

/**
 * Runs `attempt` with the trace's traceparent on the call, in a span of its own
 * when the request is sampled; `attempts` gets the attempt's reasons when it ends,
 * as it would untraced.
 */
export async function tracedAttempt(
  trace: TraceScope,
  node: string,
  call: NodeCall,
  attempts: AttemptLog,
  attempt: Attempt,
): Promise<NodeAnswer | null> {
  const span = trace.child(SPAN.attempt, SpanKind.CLIENT, { [ATTR.node]: node, [ATTR.method]: call.method });
  const traced = attemptOf(call, call.timeoutMs, call.signal, (span ?? trace).headers(call.headers));
  if (span === undefined) return attempt(traced, attempts);
  const reasons = new AttemptLog();
  try {
    const answer = await attempt(traced, reasons);
    if (answer !== null) {
      const failed = answer.status >= 500;
      span.end(
        { [ATTR.status]: answer.status, [ATTR.outcome]: failed ? 'node_error' : 'ok' },
        failed ? `HTTP ${answer.status}` : undefined,
      );
    } else if (call.signal?.aborted) {
      span.end({ [ATTR.outcome]: 'cancelled' });
    } else {
      span.end({ [ATTR.outcome]: 'failed' }, reasons.texts.join('; ') || 'no answer');
    }
    return answer;
  } catch (err) {
    // Shed for the proxy's own load (answer bytes in flight): the read ends here.
    span.end({ [ATTR.outcome]: 'shed' }, NodeError.from(err).message);
    throw err;
  } finally {
    attempts.take(reasons);
  }
}
