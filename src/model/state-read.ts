// What state a latest read's answer is read from, as its route's descriptor says
// (docs/caching.md, "Latest reads from the change feed"): the answer stays the
// latest while no version writes any of it, and the change feed tells which keys
// each version wrote.

/** Which AccessPath writes at an account change an answer, whatever their key. */
export type AccountWrites =
  /** any AccessPath (a list of the account's resources) */
  | 'any'
  /** any ResourceGroup (a resource that may be a group's member) */
  | 'group'
  /** any Code (a list of its modules; a JSON rendering of its types) */
  | 'code';

export interface StateRead {
  /** the StateKeys (their BCS bytes, as a write set holds them) the answer is read from */
  readonly keys: readonly Uint8Array[];
  /**
   * StateKeys the answer needs to exist without reading their value (an account an
   * older node checks before it answers): only their removal changes the answer
   */
  readonly existing?: readonly Uint8Array[];
  /** accounts (0x + 64 lower-case hex digits) and which of their writes change the answer too */
  readonly accounts: ReadonlyArray<{ readonly address: string; readonly writes: AccountWrites }>;
  /** A module published or upgraded anywhere changes the answer. */
  readonly anyModule?: boolean;
  /**
   * A module published or upgraded at a special address (0x0 to 0xf: the
   * framework's packages, which only governance changes) changes the answer.
   */
  readonly frameworkModules?: boolean;
}

/** What a request names in the ledger's state, as its route parsed it. */
export type StateTarget =
  /** a table item by its BCS key bytes (raw_item) */
  | { readonly kind: 'table_item'; readonly handle: string; readonly key: Uint8Array }
  /** a StateKey given whole, as its BCS bytes (experimental/state_values/raw) */
  | { readonly kind: 'state_key'; readonly key: Uint8Array }
  /** an account, a list of its resources or modules */
  | { readonly kind: 'account' | 'resources' | 'modules'; readonly address: string }
  /** one resource: its struct tag, canonical (long addresses, no spaces) */
  | { readonly kind: 'resource'; readonly address: string; readonly tag: string }
  | { readonly kind: 'module'; readonly address: string; readonly name: string };
