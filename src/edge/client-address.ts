// Which hop is the client (server.trustProxy, fastify's rules, for raw requests
// too): its address, for the limits and the log, and whether the peer itself is
// one of the addresses server.trustProxy lists, which may name the tenant
// (tenants.trustedHeader) and is told the nodes' headroom.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { PublicRequest } from './message.js';

type Trust = (addr: string, hop: number) => boolean;

function trustOf(trustProxy: boolean | number | string): Trust {
  if (trustProxy === true) return () => true;
  if (trustProxy === false) return () => false;
  if (typeof trustProxy === 'number') return (_addr, hop) => hop < trustProxy;
  return proxyAddr.compile(trustProxy.split(',').map((s) => s.trim()));
}

export function clientAddressOf(trustProxy: boolean | number | string): (req: PublicRequest) => string {
  if (trustProxy === false) return (req) => req.socket.remoteAddress ?? '';
  const trust = trustOf(trustProxy);
  // proxy-addr reads the peer's address and X-Forwarded-For, which every transport's request has.
  return (req) => proxyAddr(req as IncomingMessage, trust);
}

/**
 * Whether the peer itself is an address server.trustProxy lists (as nginx's
 * set_real_ip_from): only such a peer may name the tenant or hear the headroom.
 * A hop count or true says how many hops to believe, not who they are, so with
 * either (or false) no peer is trusted.
 */
export function trustedPeerOf(trustProxy: boolean | number | string): (req: PublicRequest) => boolean {
  if (typeof trustProxy !== 'string') return () => false;
  const trust = trustOf(trustProxy);
  return (req) => trust(req.socket.remoteAddress ?? '', 0);
}
