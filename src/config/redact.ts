// The effective config as `--check` prints it: everything an operator needs to
// see, nothing that would let a reader of a terminal or a CI log call a node or
// Redis as the proxy does.
//
// The rules are by shape, not by path, so a section added later is covered
// without an entry here: every value under a key that names secrets (headers,
// keys, tokens, passwords...) is hidden, whatever the section; and every URL,
// wherever it stands, loses its userinfo and its query values, where keys are
// put. Its origin and path stay: they say which node or server it is.

export const REDACTED = '<redacted>';

/** Keys whose every value (at any depth under them) is a secret. */
const SECRET_KEYS = /^(headers|keys?|apikeys?|tokens?|secrets?|passwords?|credentials|authorization|auth)$/i;

/** Whether a config path runs under a key that names secrets: its value is never shown, in errors either. */
export function isSecretPath(path: readonly PropertyKey[]): boolean {
  return path.some((key) => typeof key === 'string' && SECRET_KEYS.test(key));
}

/** A copy of `value` with every secret replaced by REDACTED. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value === 'string') return redactUrl(value);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value))
    out[key] = SECRET_KEYS.test(key) ? hideLeaves(child) : redactSecrets(child);
  return out;
}

/** The same shape (header names, list lengths), with every leaf value hidden. */
function hideLeaves(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hideLeaves);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hideLeaves(v)]));
  return value === undefined ? value : REDACTED;
}

/**
 * A URL without its userinfo (a user name can be a key too: https://KEY@host/) and
 * its query values; any other string as it is. Used wherever a URL is shown to
 * an operator: `--check`, the probe log, /readyz.
 */
export function redactUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not parseable, but shaped like a URL: it may still hold a password.
    return REDACTED;
  }
  // Nothing to hide: the URL as written, not as URL would normalise it.
  if (url.username === '' && url.password === '' && url.search === '') return text;
  if (url.username !== '') url.username = REDACTED;
  if (url.password !== '') url.password = REDACTED;
  for (const key of [...url.searchParams.keys()]) url.searchParams.set(key, REDACTED);
  return url.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}
