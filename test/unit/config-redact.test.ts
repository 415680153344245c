// The --check redaction works by shape, so sections added later are covered:
// any value under a key that names secrets, and every URL's userinfo and query
// values. A URL's origin and path stay: they say which node or server it is.
import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets, redactUrl } from '../../src/config/redact.js';

describe('redactSecrets', () => {
  it('hides every value under a secret-named key, at any depth, keeping the shape', () => {
    const config = {
      tenants: {
        anonymous: { priority: 'low', requestsPerSecond: 20 },
        list: [
          { name: 'wallet-backend', keys: [{ sha256: 'a'.repeat(64) }, { env: 'WALLET_KEY_2' }], priority: 'high' },
          { name: 'dapp', keys: [{ sha256: 'b'.repeat(64) }], origins: ['https://dapp.example'] },
        ],
      },
      upstreams: [{ url: 'https://n.example/v1', headers: { authorization: 'Bearer k', 'x-api-key': 'k2' } }],
      tracing: { otlpEndpoint: 'https://otel.example:4318', headers: { 'x-honeycomb-team': 'team-key' } },
      vendor: { apiKey: 'vendor-key', token: 't', password: 'p', secret: 's' },
    };
    expect(redactSecrets(config)).toEqual({
      tenants: {
        anonymous: { priority: 'low', requestsPerSecond: 20 },
        list: [
          { name: 'wallet-backend', keys: [{ sha256: REDACTED }, { env: REDACTED }], priority: 'high' },
          { name: 'dapp', keys: [{ sha256: REDACTED }], origins: ['https://dapp.example'] },
        ],
      },
      upstreams: [{ url: 'https://n.example/v1', headers: { authorization: REDACTED, 'x-api-key': REDACTED } }],
      tracing: { otlpEndpoint: 'https://otel.example:4318', headers: { 'x-honeycomb-team': REDACTED } },
      vendor: { apiKey: REDACTED, token: REDACTED, password: REDACTED, secret: REDACTED },
    });
  });

  it('leaves everything else as it is', () => {
    const plain = {
      server: { port: 8080, trustProxy: '10.0.0.0/8' },
      upstreams: [{ url: 'sim', name: 'sim' }],
      passthrough: true,
      chainId: undefined,
    };
    expect(redactSecrets(plain)).toEqual(plain);
  });
});

describe('redactUrl', () => {
  it.each([
    ['redis://:pass@redis:6379', `redis://:${REDACTED}@redis:6379`],
    ['redis://user:pass@redis:6379/2', `redis://${REDACTED}:${REDACTED}@redis:6379/2`],
    ['https://k3y@provider.example/v1', `https://${REDACTED}@provider.example/v1`],
    ['rediss://redis.example:6380', 'rediss://redis.example:6380'],
    ['https://fullnode.mainnet.example/v1', 'https://fullnode.mainnet.example/v1'],
    ['http://10.0.0.5:8080/api', 'http://10.0.0.5:8080/api'],
    ['https://provider.example/tenant-7/v1', 'https://provider.example/tenant-7/v1'],
    ['https://provider.example/v1?api-key=k&x=1', `https://provider.example/v1?api-key=${REDACTED}&x=${REDACTED}`],
    ['http://u:p@h:1/', `http://${REDACTED}:${REDACTED}@h:1/`],
    ['http://otel-collector:4318/v1/traces', 'http://otel-collector:4318/v1/traces'],
    ['sim', 'sim'],
    ['not a url', 'not a url'],
    ['https://[bad', REDACTED],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
