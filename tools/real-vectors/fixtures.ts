// aptos-core's indexer fixtures: each write-set change of a real mainnet transaction, as the
// indexer's protobuf JSON shows it, with the state_key_hash the chain computed (base64).
import { parseAddress } from '../../src/wire/address.js';
import { parseTypeTag, type TypeTag } from '../../src/wire/move-type.js';
import { encodeStateKey, type StateKeySpec, stateKeyHash } from '../../src/writes/state-key.js';

/**
 * The resource groups a member change may be written under (the fixtures name a member's type,
 * not its group): the framework's object group, and the one the names service's v2.1 domains
 * module declares for its own objects.
 */
const GROUPS = [
  '0x1::object::ObjectGroup',
  '0x867ed1f6bf916171b1de3ee92849b8978b7d1b9e0a8cc982a3d19d535dfd9c0c::v2_1_domains::ObjectGroup',
];

interface Counts {
  checked: number;
  matched: number;
  /** members matched by their group's key, per group */
  asGroup: Record<string, number>;
}

/** What of a fixture this reads: its changes, each a type and one body named after it (writeResource, …). */
export interface Fixture {
  info?: { changes?: Array<{ type: string } & Record<string, unknown>> };
}

interface ChangeBody {
  stateKeyHash?: string;
  handle?: string;
  key?: string;
  address?: string;
  typeStr?: string;
  module?: string;
  data?: { abi?: { name?: string } };
}

export interface FixtureReport {
  changes: number;
  byKind: Record<string, Counts>;
  notCheckable: Record<string, number>;
  mismatches: string[];
}

const struct = (text: string) => parseTypeTag(text) as (TypeTag & { kind: 'struct' }) | null;
const hashOf = (spec: StateKeySpec) => stateKeyHash(encodeStateKey(spec)).toString('base64');

export function checkFixtures(files: Array<{ name: string; json: Fixture }>): FixtureReport {
  const report: FixtureReport = { changes: 0, byKind: {}, notCheckable: {}, mismatches: [] };
  const counts = (kind: string) => (report.byKind[kind] ??= { checked: 0, matched: 0, asGroup: {} });
  const notCheckable = (why: string) => (report.notCheckable[why] = (report.notCheckable[why] ?? 0) + 1);
  for (const { name, json } of files) {
    for (const change of json.info?.changes ?? []) {
      report.changes++;
      const type: string = change.type;
      const body = (Object.entries(change).find(([k]) => k !== 'type')?.[1] ?? {}) as ChangeBody;
      const recorded = body.stateKeyHash;
      if (recorded === undefined) {
        notCheckable(`${type} without a state_key_hash`);
        continue;
      }
      if (type.endsWith('_TABLE_ITEM')) {
        const handle = parseAddress(body.handle ?? '');
        const key = Buffer.from(String(body.key).replace(/^0x/, ''), 'hex');
        const c = counts('table items');
        c.checked++;
        if (handle !== null && hashOf({ kind: 'table_item', handle, key }) === recorded) c.matched++;
        else report.mismatches.push(`${name}: table item ${body.handle} ${body.key}`);
      } else if (type.endsWith('_RESOURCE')) {
        const address = parseAddress(body.address ?? '');
        const tag = struct(body.typeStr ?? '');
        if (address === null || tag === null) {
          notCheckable(`a resource type wire/ does not parse (${body.typeStr})`);
          continue;
        }
        const c = counts('resources and resource-group members');
        c.checked++;
        if (hashOf({ kind: 'resource', address, tag }) === recorded) c.matched++;
        else {
          const group = GROUPS.find((g) => hashOf({ kind: 'resource_group', address, tag: struct(g)! }) === recorded);
          if (group === undefined) report.mismatches.push(`${name}: resource ${body.typeStr} at ${body.address}`);
          else {
            c.matched++;
            c.asGroup[group] = (c.asGroup[group] ?? 0) + 1;
          }
        }
      } else if (type.endsWith('_MODULE')) {
        const address = parseAddress(body.address ?? '');
        const module: unknown = body.data?.abi?.name ?? body.module;
        if (address === null || typeof module !== 'string') {
          notCheckable('a module change without its name');
          continue;
        }
        const c = counts('modules');
        c.checked++;
        if (hashOf({ kind: 'code', address, module }) === recorded) c.matched++;
        else report.mismatches.push(`${name}: module ${module} at ${body.address}`);
      } else notCheckable(`${type}`);
    }
  }
  return report;
}
