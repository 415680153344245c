// What a node answered, judged and read: whether it is node-shaped (the proxy
// relays nothing else), and what its headers say (the ledger snapshot, gas used,
// the cursor, Retry-After, an error body's codes).
import { ERROR_STATUSES, isErrorCode, NodeError } from '../../errors.js';
import { decodeGasUsed, type LedgerHeaderDecoder, type LedgerHeaderNames } from '../../ledger/headers.js';
import type { NodeAnswer } from '../../model/node-answer.js';
import { mediaType } from '../../wire/media-type.js';
import { firstHeader, type RawAnswer } from './node-call.js';

/**
 * A node's answer as the proxy takes it: its replayed fields and ledger snapshot
 * read from the headers, and a throw of NodeError (503) when it is not
 * node-shaped: a 200 that is neither BCS nor JSON, a 429, a status a node never
 * sends, an error without a node error body. A passthrough answer below 400
 * passes whatever its type, with the node's headers.
 */
export function shapeAnswer(
  raw: RawAnswer,
  how: { node: string; names: LedgerHeaderNames; ledger: LedgerHeaderDecoder; passthrough: boolean },
): NodeAnswer {
  const { status, headers, body } = raw;
  const { node, names, ledger, passthrough } = how;
  const contentType = firstHeader(headers['content-type']) ?? '';
  const type = mediaType(contentType);
  const answer: NodeAnswer = {
    upstream: node,
    status,
    contentType,
    body,
    gasUsed: decodeGasUsed(names, headers),
    ledger: ledger.decode(names, headers),
  };
  // A page's pointer to the next one (resources, modules): part of the answer.
  const cursor = firstHeader(headers[names.cursor]);
  if (cursor !== undefined) answer.cursor = cursor;
  const broken = (what: string): never => {
    throw NodeError.unavailable(`upstream ${node}: ${what}`, 'node_broken');
  };
  if (passthrough) {
    answer.headers = headers;
    if (status < 400) return answer;
  }
  if (status === 200) {
    if (type === 'application/x-bcs') return answer;
    if (type === 'application/json') {
      const parsed = parseJson(body);
      if (parsed === NOT_JSON) broken('answered 200 with a body that is not JSON');
      answer.json = parsed;
      return answer;
    }
    return broken(`answered 200 with content type '${contentType || 'none'}'`);
  }
  if (status === 429) broken('answered 429 Too Many Requests (rate limited)');
  // A refusal of the proxy's own credentials is the deployment's failure, not the client's.
  if ((status === 401 || status === 403 || status === 407) && parseErrorBody(body) === null) {
    broken(`answered HTTP ${status}: check the node's upstreams[].headers (API key)`);
  }
  if (!(ERROR_STATUSES as readonly number[]).includes(status)) {
    broken(`answered HTTP ${status}${type ? ` ${type}` : ''}${body.length === 0 ? ' with an empty body' : ''}`);
  }
  const error = parseErrorBody(body);
  if (error === null) {
    broken(
      `answered HTTP ${status} without a node error body${body.length === 0 ? ' (empty)' : type ? ` (${type})` : ''}`,
    );
  }
  answer.errorCode = error!.code;
  answer.vmErrorCode = error!.vmErrorCode;
  const retryAfter = retryAfterMs(firstHeader(headers['retry-after']));
  if (retryAfter !== undefined) answer.retryAfterMs = retryAfter;
  return answer;
}

/** A Retry-After (RFC 9110 §10.2.3: delta seconds or an HTTP date) in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const NOT_JSON = Symbol('not JSON');

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

function parseErrorBody(body: Buffer): { code: string; vmErrorCode: number | null } | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (typeof parsed !== 'object' || parsed === null) return null;
    if (typeof parsed.message !== 'string' || !isErrorCode(parsed.error_code)) return null;
    const vm = parsed.vm_error_code;
    return { code: parsed.error_code, vmErrorCode: typeof vm === 'number' ? vm : null };
  } catch {
    return null;
  }
}
