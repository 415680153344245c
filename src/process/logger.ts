// The process's logger, in the format log.format names: JSON lines for machines,
// or for a person at a terminal one readable line a request,
// `{method} {path} {status} {cache} {ms}ms {reqId}`, then the line's other fields.
// Either way the lines go through the buffered destination (log.ts), so a
// request's line never waits on stdout's reader.
import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogFormat, LogLevel } from '../config/index.js';
import { bufferedLogDestination, type LogDestination } from './log.js';

/** The access line's message (reply/accounting.ts). */
const ACCESS_MESSAGE = 'request';
/** The access line's fields its pretty message shows: left out of the fields after it. */
const ACCESS_MESSAGE_FIELDS = ['method', 'path', 'status', 'cache', 'ms', 'reqId'] as const;

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

/** The format log.format means for an output that is, or is not, a terminal. */
export function effectiveLogFormat(format: LogFormat, isTTY: boolean): 'json' | 'pretty' {
  if (format === 'auto') return isTTY ? 'pretty' : 'json';
  return format;
}

/** Turns one JSON log line into one readable line (and an error's stack under it); colours on a terminal only. */
export function prettyLines(colorize: boolean): (line: string) => string {
  // A field of the access line that its message shows is dropped from the fields after it (in singleLine
  // mode a prettifier's undefined leaves the field out); on every other line it stays.
  const dropOnAccessLine = (value: unknown, _key: string, log: object): string =>
    ((log as { msg?: unknown }).msg === ACCESS_MESSAGE ? undefined : value) as string;
  return prettyFactory({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    messageFormat: (log, messageKey) => {
      const message = String(log[messageKey] ?? '');
      if (message !== ACCESS_MESSAGE) return message;
      return `${log.method} ${log.path} ${log.status} ${log.cache} ${log.ms}ms ${log.reqId}`;
    },
    customPrettifiers: Object.fromEntries(ACCESS_MESSAGE_FIELDS.map((key) => [key, dropOnAccessLine])),
  });
}

/** The logger on stdout, and its destination (to flush before the process exits). */
export function processLogger(
  settings: LogSettings,
  stdout: { isTTY?: boolean } = process.stdout,
): { logger: Logger; destination: LogDestination } {
  const destination = bufferedLogDestination();
  const isTTY = stdout.isTTY === true;
  if (effectiveLogFormat(settings.format, isTTY) === 'json')
    return { logger: pino({ level: settings.level }, destination), destination };
  const pretty = prettyLines(isTTY);
  const prettyDestination: LogDestination = {
    write: (line) => destination.write(pretty(line)),
    flushSync: () => destination.flushSync(),
  };
  return { logger: pino({ level: settings.level }, prettyDestination), destination };
}
