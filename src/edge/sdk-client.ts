// Which SDK called: a client's X-<VENDOR>-CLIENT header (the Aptos SDKs send
// `x-aptos-client: aptos-typescript-sdk/1.39.0`) goes on with the node calls made
// for it, reads and passthrough alike, so a node's operators still see which SDK
// called through the proxy. Only a well-formed one: 1 to 128 visible ASCII
// characters, spaces inside; anything else is dropped, never passed on.
import type { IncomingHttpHeaders } from 'node:http';

/** The client's SDK header, as it goes to a node. */
export interface SdkClient {
  /** the header name, lower-case: x-<vendor>-client */
  readonly name: string;
  readonly value: string;
}

const WELL_FORMED = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/;

/** The request's `name` header when it is a well-formed SDK name, else undefined. */
export function sdkClientOf(headers: IncomingHttpHeaders, name: string): SdkClient | undefined {
  const value = headers[name];
  return typeof value === 'string' && WELL_FORMED.test(value) ? { name, value } : undefined;
}
