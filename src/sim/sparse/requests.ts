// The reads that name a universe key: what a test or the bench asks a node (or a proxy)
// to read a key it picked, hot or cold. Every key is also read exactly by
// state_values/raw with its StateKey.
import { simNodeTypeName } from './keys.js';
import type { SimUniverseKey } from './universe.js';

export interface SimKeyRequest {
  method: 'GET' | 'POST';
  /** the path under the node's base URL, without ?ledger_version */
  path: string;
  /** a POST's JSON body */
  body?: Record<string, unknown>;
  /** what the route answers in: json, bcs, or both (by Accept) */
  formats: Array<'json' | 'bcs'>;
}

const BOTH: Array<'json' | 'bcs'> = ['json', 'bcs'];
const MEMBERS = ['0x1::object::ObjectCore', '0x1::fungible_asset::FungibleStore'];

export function simKeyRequests(key: SimUniverseKey): SimKeyRequest[] {
  const raw: SimKeyRequest = {
    method: 'POST',
    path: '/v1/experimental/state_values/raw',
    body: { key: '0x' + key.stateKey.toString('hex') },
    formats: ['bcs'],
  };
  const spec = key.spec;
  const account = `/v1/accounts/${key.owner}`;
  const resource = (type: string): SimKeyRequest => ({
    method: 'GET',
    path: `${account}/resource/${encodeURIComponent(type)}`,
    formats: BOTH,
  });
  switch (spec.kind) {
    case 'table_item':
      return [
        raw,
        {
          method: 'POST',
          path: `/v1/tables/${spec.handle}/raw_item`,
          body: { key: '0x' + spec.key.toString('hex') },
          formats: ['bcs'],
        },
        {
          method: 'POST',
          path: `/v1/tables/${spec.handle}/item`,
          body: { key_type: 'u64', value_type: 'u64', key: String(spec.key.readBigUInt64LE(0)) },
          formats: BOTH,
        },
      ];
    case 'code':
      return [raw, { method: 'GET', path: `${account}/module/${spec.module}`, formats: BOTH }];
    case 'resource_group':
      return [raw, ...MEMBERS.map(resource)];
    case 'resource': {
      const out = [raw, resource(simNodeTypeName(spec.tag))];
      if (key.kind === 'account') out.push({ method: 'GET', path: account, formats: BOTH });
      if (key.kind === 'coin_store')
        out.push({ method: 'GET', path: `${account}/balance/0x1::aptos_coin::AptosCoin`, formats: BOTH });
      return out;
    }
  }
}
