// A port free right now on 127.0.0.1: for listeners where 0 means "off" (admin),
// for a CLI started on a config file, and for a redis-server.
//
// Drawn at random below the kernel's ephemeral range and tried: a port the kernel
// handed out for listen(0) is one it hands out again at once, to another suite's
// listener or to an outgoing connection's source port, before the caller listens.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux), else the IANA default. */
function ephemeralStart(): number {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(first);
    return Number.isInteger(port) && port > LOWEST + 1000 ? port : 49_152;
  } catch {
    return 49_152;
  }
}

const HIGHEST = ephemeralStart() - 1;

function tryPort(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (await tryPort(port)) return port;
  }
  throw new Error(`no free port found in ${LOWEST}–${HIGHEST}`);
}
