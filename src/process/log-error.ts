// An error in a log line is always under `err`, as pino's err serializer writes it
// (type, message, stack, code and the error's other own fields), so an alert or a
// search matches one shape. What a catch or a callback hands over is not always an
// Error: it becomes one here, with the value as its message.

/** `value` when it is an Error; otherwise an Error whose message is the value, as text. */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === 'string' ? value : String(value));
}

/**
 * `value` as an Error for `err`, its stack cut to its first line unless `logger`
 * logs debug: a failure that repeats (Redis down, a node's transport) would
 * otherwise fill the log at warn with the same frames. Debug shows them.
 */
export function loggedError(value: unknown, logger: { isLevelEnabled(level: string): boolean }): Error {
  const err = asError(value);
  if (logger.isLevelEnabled('debug')) return err;
  // The same prototype, so the serializer names the same type; the own fields (code, errno…) copied.
  const copy = Object.assign(Object.create(Object.getPrototypeOf(err)) as Error, err);
  copy.message = err.message;
  copy.stack = (err.stack ?? `${err.name}: ${err.message}`).split('\n', 1)[0];
  return copy;
}
