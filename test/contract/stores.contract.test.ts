// The store contract against every tier; Redis on its own redis-server.
import { afterAll, beforeAll } from 'vitest';
import { MemoryStore } from '../../src/cache/memory.js';
import { RedisStore } from '../../src/cache/redis.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { runStoreContract } from './store-contract.js';

runStoreContract('MemoryStore', async () => {
  const store = new MemoryStore({ maxBytes: 16 * 1024 * 1024 });
  return { store, cleanup: () => store.close() };
});

let server: RedisServerHandle;
let clusterNode: RedisServerHandle;
let instance = 0;
beforeAll(async () => {
  [server, clusterNode] = await Promise.all([startRedisServer(), startRedisServer({ cluster: true })]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), clusterNode?.stop()]);
});

async function ready(store: RedisStore): Promise<{ store: RedisStore; cleanup(): Promise<void> }> {
  if (!(await store.whenReady(5000))) {
    await store.close();
    throw new Error('RedisStore did not connect');
  }
  return { store, cleanup: () => store.close() };
}

// A fresh prefix per test keeps tests apart without flushing.
runStoreContract('RedisStore', () => ready(new RedisStore({ url: server.url, keyPrefix: `contract:${++instance}:`, commandTimeoutMs: 2000 })));

runStoreContract('RedisStore on a Redis Cluster', () => ready(new RedisStore({ cluster: [clusterNode.url], keyPrefix: `contract:${++instance}:`, commandTimeoutMs: 2000 })));
