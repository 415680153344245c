// Starting the processes a scenario needs. CPU layout when pinning is possible
// (2+ CPUs and taskset): servers under test (proxy, ceiling) on CPU 0; the load
// generator, the simulated node and redis-server on CPU 1. Unpinned otherwise.
import { fileURLToPath } from 'node:url';
import { spawnChild } from './child.mjs';
import { startCliProxy } from './cli-proxy.mjs';
import { startRedis } from './redis.mjs';

export const SERVER_CPU = 0;
export const CLIENT_CPU = 1;

const proc = (name) => fileURLToPath(new URL(`../proc/${name}.mjs`, import.meta.url));

/** Everything started through a Services is stopped by stopAll(), newest first. */
export class Services {
  #started = [];

  #track(name, handle) {
    this.#started.push({ name, handle, stop: () => handle.stop() });
    return handle;
  }

  async sim(params = {}, { cpu = CLIENT_CPU } = {}) {
    return this.#track('sim', await spawnChild(proc('sim'), { cpu, params, name: 'sim' }));
  }

  async load() {
    return this.#track('load', await spawnChild(proc('load'), { cpu: CLIENT_CPU, name: 'load' }));
  }

  /**
   * A proxy in front of `simUrl`; `config` is merged over the bench base config. It
   * logs at `logLevel` (default: the proxy's default, info) to its stdout, a pipe
   * this process drains as a container's log collector would; handle.logLines()
   * counts the lines so far. `plantMicros`: the speed guard's planted cost per memory hit (proc/proxy.mjs);
   * `dist`: another build to run (the guard's baseline, lib/baseline.mjs) instead of this checkout's.
   */
  async proxy(
    simUrl,
    config = {},
    {
      nodeArgs = ['--expose-gc'],
      name = 'proxy',
      logLevel = 'info',
      script = proc('proxy'),
      plantMicros = 0,
      dist = undefined,
    } = {},
  ) {
    const full = { upstreams: [{ url: simUrl, name: 'sim' }], ...config };
    const handle = await spawnChild(script, {
      cpu: SERVER_CPU,
      params: { config: full, logLevel, ...(plantMicros > 0 ? { plantMicros } : {}), ...(dist ? { dist } : {}) },
      nodeArgs,
      name,
      stdout: 'count',
    });
    handle.logLines = handle.stdoutLines;
    return this.#track(name, handle);
  }

  /** The proxy started by its CLI (`dist/main.js --config`), e.g. with server.workers > 1; pinned to `cpu` (a taskset list). */
  async cliProxy(simUrl, { workers = 1, cpu, name = `proxy-cli-${workers}`, config = {} } = {}) {
    return this.#track(
      name,
      await startCliProxy({ config: { upstreams: [{ url: simUrl, name: 'sim' }], ...config }, cpu, workers }),
    );
  }

  async ceiling(params) {
    return this.#track('ceiling', await spawnChild(proc('ceiling'), { cpu: SERVER_CPU, params, name: 'ceiling' }));
  }

  /** The ceiling plus a lookup of each request's bytes among a route's keys (proc/keyed-ceiling.mjs). */
  async keyedCeiling(params) {
    return this.#track(
      'keyed-ceiling',
      await spawnChild(proc('keyed-ceiling'), { cpu: SERVER_CPU, params, name: 'keyed-ceiling' }),
    );
  }

  /** A plain net.Server writing one prepared reply per request (proc/socket-limit.mjs). */
  async socketLimit(params) {
    return this.#track(
      'socket-limit',
      await spawnChild(proc('socket-limit'), { cpu: SERVER_CPU, params, name: 'socket-limit' }),
    );
  }

  /** A bare node:http + undici forwarder to `target` (proc/forwarder.mjs): the least a Node proxy adds to a miss. */
  async forwarder(target) {
    return this.#track(
      'forwarder',
      await spawnChild(proc('forwarder'), { cpu: SERVER_CPU, params: { target }, name: 'forwarder' }),
    );
  }

  /**
   * nginx with proxy_cache in front of `upstream` (proc/nginx.mjs, lib/nginx.mjs), or
   * with `cache` false a plain proxy_pass, its worker pinned to the servers' CPU; `bin`
   * from findNginx(). info.pid is the worker's.
   */
  async nginx({ bin, upstream, cache = true }) {
    return this.#track(
      'nginx',
      await spawnChild(proc('nginx'), {
        cpu: CLIENT_CPU,
        params: { bin, upstream, cpu: SERVER_CPU, cache },
        name: 'nginx',
      }),
    );
  }

  async memfill(params) {
    return this.#track(
      'memfill',
      await spawnChild(proc('memfill'), {
        cpu: SERVER_CPU,
        params,
        nodeArgs: ['--expose-gc'],
        name: 'memfill',
        readyTimeoutMs: 120_000,
      }),
    );
  }

  /** The change feed's reader decoding transaction pages (proc/feed-decode.mjs), on the servers' CPU. */
  async feedDecode(params) {
    return this.#track(
      'feed-decode',
      await spawnChild(proc('feed-decode'), { cpu: SERVER_CPU, params, name: 'feed-decode', readyTimeoutMs: 120_000 }),
    );
  }

  async redis() {
    return this.#track('redis', await startRedis({ cpu: CLIENT_CPU }));
  }

  /** The pids of everything running (and this process): what the quiet gate leaves out. */
  pids() {
    return [
      process.pid,
      ...this.#started.flatMap((s) => [s.handle.info?.pid ?? s.handle.pid, s.handle.info?.masterPid]),
    ].filter((pid) => pid !== undefined);
  }

  /** Stops one handle early (it is also forgotten by stopAll). */
  async stop(handle) {
    const i = this.#started.findIndex((s) => s.handle === handle);
    await handle.stop();
    if (i >= 0) this.#started.splice(i, 1);
  }

  async stopAll() {
    while (this.#started.length > 0) {
      const s = this.#started.pop();
      try {
        await s.stop();
      } catch (err) {
        console.error(`stopping ${s.name}: ${err.message}`);
      }
    }
  }
}
