// A private redis-server on a free port (never 6379), no persistence.
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { pinned } from './child.mjs';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setTimeout(500, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      data += chunk;
      if (data.includes('\r\n')) {
        socket.end();
        resolve(data.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
  });
}

export async function startRedis({ cpu } = {}) {
  const port = await freePort();
  const [cmd, ...args] = pinned(cpu, [
    'redis-server',
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--loglevel',
    'warning',
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Not a Node child: it would outlive a bench that crashes, so kill it on exit.
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  exited.then(() => process.off('exit', onExit));
  let failed = null;
  child.once('error', (err) => (failed = err));
  const until = Date.now() + 5000;
  while (!(await ping(port))) {
    if (failed) throw new Error(`redis-server did not start: ${failed.message} (apt-get install -y redis-server)`);
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error('redis-server did not answer PING within 5 s');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
