// The request and the reply as every entry path sees them, whichever transport
// carries them: node:http's IncomingMessage and ServerResponse, or the lane's own
// (http/lane/). The edge, the writer, the responder and the accounting use these
// and nothing else of a message, so one entry path serves both transports.
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

export interface PublicRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  /** lower-case names */
  readonly headers: IncomingHttpHeaders;
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  readonly socket: Socket;
  /** the whole request was received */
  readonly complete: boolean;
  /** the whole body, when the transport read it before the entry saw the request (the lane); node:http streams it */
  readonly body?: Buffer;
  /** the transport found that the request line names a route the entry serves itself (the lane takes no other) */
  readonly servedByEntry?: boolean;
}

/**
 * Header lines of a reply head, in order, as name, value pairs; `bytes`, when
 * present, is the same lines serialised once (`name: value\r\n` each, latin1)
 * and kept for every reply that repeats them. A block with bytes never holds
 * Date, Connection, Keep-Alive or Content-Length.
 */
export interface HeadBlock {
  readonly pairs: readonly string[];
  readonly bytes?: Buffer;
}

export interface PublicReply {
  readonly req: PublicRequest;
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableFinished: boolean;
  setHeader(name: string, value: string): unknown;
  /** headers as flat name, value pairs */
  writeHead(status: number, headers: string[]): unknown;
  /** the head as blocks, when the transport writes kept bytes as they are (the lane); else writeHead of their pairs */
  writeBlocks?(status: number, blocks: readonly HeadBlock[]): unknown;
  end(body?: Buffer | string): unknown;
  destroy(): unknown;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/** A request handler of either transport. */
export type PublicHandler = (req: PublicRequest, res: PublicReply) => void;
