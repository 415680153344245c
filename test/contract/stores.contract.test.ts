// The store contract against every tier; Redis on its own redis-server.
import { MemoryStore } from '../../src/cache/memory.js';
import { type RedisStore, redisStore } from '../../src/cache/redis/store.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { runStoreContract } from './store-contract.js';

runStoreContract('MemoryStore', async () => {
  const store = new MemoryStore({ maxBytes: 16 * 1024 * 1024 });
  return { store, cleanup: () => store.close() };
});

const server = useRedisServer();
const clusterNode = useRedisServer({ cluster: true });
let instance = 0;

async function ready(store: RedisStore): Promise<{ store: RedisStore; cleanup(): Promise<void> }> {
  if (!(await store.whenReady(5000))) {
    await store.close();
    throw new Error('RedisStore did not connect');
  }
  return { store, cleanup: () => store.close() };
}

// A fresh prefix per test keeps tests apart without flushing.
runStoreContract('RedisStore', () =>
  ready(redisStore({ url: server.url, keyPrefix: `contract:${++instance}:`, commandTimeoutMs: 2000 })),
);

runStoreContract('RedisStore on a Redis Cluster', () =>
  ready(redisStore({ cluster: [clusterNode.url], keyPrefix: `contract:${++instance}:`, commandTimeoutMs: 2000 })),
);
