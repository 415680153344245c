// llhttp, node:http's own request parser, driven directly: what it makes of some
// bytes as one whole request, to hold the lane's parser (src/http/lane/head.ts)
// to it.
import { createRequire } from 'node:module';

/** A request as a parser read it: lower-case field names. */
export interface ParsedRequest {
  method: string;
  url: string;
  minor: number;
  headers: Record<string, string>;
  body: string;
  keepAlive: boolean;
}

type LlhttpParser = {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(buf: Buffer): number | Error;
  finish(): number | Error | undefined;
  [key: number]: unknown;
};
const require = createRequire(import.meta.url);
const { HTTPParser, methods } = require('node:_http_common') as {
  HTTPParser: { new (): LlhttpParser; REQUEST: number } & Record<string, number>;
  methods: string[];
};

/** What llhttp (strict, as node:http runs it) makes of `bytes` as one whole request, or null when it refuses it or finds it incomplete. */
export function llhttp(bytes: Buffer, maxHeaderSize = 16384): ParsedRequest | null {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, 0);
  let parsed: ParsedRequest | null = null;
  let complete = false;
  let raw: string[] = [];
  const body: Buffer[] = [];
  parser[HTTPParser.kOnHeaders] = (headers: string[]) => raw.push(...headers);
  parser[HTTPParser.kOnHeadersComplete] = (
    _major: number,
    minor: number,
    headers: string[] | undefined,
    method: number,
    url: string,
    _status: unknown,
    _message: unknown,
    _upgrade: boolean,
    keepAlive: boolean,
  ) => {
    raw = [...raw, ...(headers ?? [])];
    const fields: Record<string, string> = {};
    for (let i = 0; i < raw.length; i += 2) fields[raw[i]!.toLowerCase()] = raw[i + 1]!;
    parsed = { method: methods[method]!, url, minor, headers: fields, body: '', keepAlive };
  };
  parser[HTTPParser.kOnBody] = (chunk: Buffer) => body.push(Buffer.from(chunk));
  parser[HTTPParser.kOnMessageComplete] = () => {
    complete = true;
  };
  const used = parser.execute(bytes);
  if (used instanceof Error || !complete || parsed === null) return null;
  return { ...(parsed as ParsedRequest), body: Buffer.concat(body).toString('latin1') };
}
