// The span of a read's cache lookup while tracing is on: from the memory tier to
// the reply's answer (Redis, another instance's fill or a node's, whose spans go
// under it). Every function here is reached only through a ReadContext that has
// a trace: a read without one (tracing off) makes no span and allocates nothing.
import { NodeError } from '../errors.js';
import { ATTR, SPAN, SpanKind, type TraceScope } from '../tracing/scope.js';
import type { ReadContext } from '../model/read-context.js';
import type { ReadResult } from '../model/read-result.js';

/** The lookup's span, under the request's; undefined while tracing is off or the request is not sampled. */
export function lookupSpan(context: ReadContext | undefined): TraceScope | undefined {
  return context?.trace?.child(SPAN.lookup, SpanKind.INTERNAL);
}

/** The context of the node calls a traced lookup makes: the same request, its calls under the lookup's span. */
export function underLookup(context: ReadContext, lookup: TraceScope): ReadContext {
  return {
    requestId: context.requestId,
    priority: context.priority,
    sdkClient: context.sdkClient,
    trace: lookup,
    nodeCallRefusal: () => context.nodeCallRefusal(),
  };
}

export function endLookup(lookup: TraceScope, result: ReadResult): void {
  lookup.end(
    result.tier === undefined
      ? { [ATTR.cache]: result.cache }
      : { [ATTR.cache]: result.cache, [ATTR.tier]: result.tier },
  );
}

/** `result`, the lookup's span ended once it settles. */
export function tracedLookup(lookup: TraceScope, result: Promise<ReadResult>): Promise<ReadResult> {
  return result.then(
    (served) => {
      endLookup(lookup, served);
      return served;
    },
    (err: unknown) => {
      const failure = NodeError.from(err);
      lookup.end({ [ATTR.errorType]: failure.reason }, failure.message);
      throw err;
    },
  );
}
