// PLACEHOLDER until the codec branch lands: replaced by the real decoder.
export interface StateKeyWrite {
  key: Buffer;
  kind: 'code' | 'resource' | 'resource_group' | 'access_path' | 'table_item' | 'raw';
  address?: string;
}
export interface VerifiedTransaction {
  version: bigint;
  writes: StateKeyWrite[];
}
export function decodeTransactionPage(_body: Uint8Array, start: bigint): VerifiedTransaction[] {
  throw Object.assign(new Error('no codec'), { reason: 'undecodable', version: start });
}
