// Pages of GET /v1/transactions in BCS, bcs(Vec<TransactionOnChainData>), shaped like
// mainnet's: blocks of a BlockMetadataExt, user transactions and a BlockEpilogue; user
// transactions calling entry functions (Ed25519, SingleSender, fee payer, keyless), with
// events and write sets of 5-15 keys (resources, group members, table items) and values of
// 100-500 bytes. Written with this file's own BCS writer, not with src/writes/ (the reader
// the bench measures), and hashed as aptos-crypto hashes them.
import { createHash } from 'node:crypto';
import { prng } from './prng.mjs';

class Writer {
  parts = [];
  u8(v) {
    this.parts.push(Uint8Array.of(v));
    return this;
  }
  uleb(n) {
    const out = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      if (v < 0x80) {
        out.push(v);
        break;
      }
      out.push((v & 0x7f) | 0x80);
    }
    this.parts.push(Uint8Array.from(out));
    return this;
  }
  u64(v) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  raw(bytes) {
    this.parts.push(bytes);
    return this;
  }
  bytes(bytes) {
    return this.uleb(bytes.length).raw(bytes);
  }
  text(t) {
    return this.bytes(Buffer.from(t));
  }
  done() {
    return Buffer.concat(this.parts);
  }
}

const seed = (name) => createHash('sha3-256').update(`APTOS::${name}`).digest();
const SEEDS = { Transaction: seed('Transaction'), WriteSet: seed('WriteSet') };
const ledgerHash = (name, bytes) => createHash('sha3-256').update(SEEDS[name]).update(bytes).digest();

/**
 * `pages` pages of `perPage` transactions from `startVersion` on; `unknownShare`: the share of
 * user transactions signed with a scheme no reader knows (an AnySignature variant past the
 * golden's), which a reader delimits by the transaction's hash; `unknownEventShare`: the share
 * of transactions with events whose first is a ContractEvent variant past the golden's (V1,
 * V2), which a reader delimits by the write set's hash.
 */
export function feedPages({
  pages,
  perPage = 100,
  startVersion = 3_000_000_000n,
  seedValue = 7,
  unknownShare = 0,
  unknownEventShare = 0,
}) {
  const random = prng(seedValue);
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
  const randomBytes = (n) => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = int(0, 255);
    return b;
  };
  const one = Buffer.alloc(32);
  one[31] = 1;
  const accounts = Array.from({ length: 2000 }, () => randomBytes(32));
  const account = () => accounts[int(0, accounts.length - 1)];
  /** A StructTag { address, module, name, type_args }; as a TypeTag it is variant 7. */
  const structTag = (w, address, module, name, args = []) => {
    w.raw(address).text(module).text(name).uleb(args.length);
    for (const a of args) a(w);
    return w;
  };
  const struct = (w, address, module, name, args) => structTag(w.u8(7), address, module, name, args);
  const aptosCoin = (w) => struct(w, one, 'aptos_coin', 'AptosCoin');
  const pathKey = (address, variant, tag) => {
    const path = new Writer().u8(variant);
    tag(path);
    return new Writer().u8(0).raw(address).bytes(path.done()).done();
  };
  const resource = (address, module, name, args) => pathKey(address, 1, (w) => structTag(w, one, module, name, args));
  const group = (address) => pathKey(address, 2, (w) => structTag(w, one, 'object', 'ObjectGroup'));
  const tableItem = () =>
    new Writer()
      .u8(1)
      .raw(randomBytes(32))
      .bytes(randomBytes(int(8, 64)))
      .done();
  const KEYS = [
    () => resource(account(), 'account', 'Account'),
    () => resource(account(), 'coin', 'CoinStore', [aptosCoin]),
    () => group(account()),
    () => group(account()),
    () => tableItem(),
  ];
  const writeSet = (n) => {
    const w = new Writer().u8(0).uleb(n);
    for (let i = 0; i < n; i++) {
      w.raw(KEYS[int(0, KEYS.length - 1)]());
      // ModificationWithMetadata { data, metadata: V1 { slot_deposit, bytes_deposit, creation_time_usecs } }, or Modification.
      if (random() < 0.7)
        w.u8(4)
          .bytes(randomBytes(int(100, 500)))
          .u8(1)
          .raw(randomBytes(24));
      else w.u8(1).bytes(randomBytes(int(100, 500)));
    }
    return w.done();
  };
  const events = (n) => {
    const w = new Writer().uleb(n);
    const unknown = unknownEventShare > 0 && random() < unknownEventShare;
    for (let i = 0; i < n; i++) {
      // A ContractEvent variant past the golden's (V1, V2): the reader cannot walk these events.
      if (unknown && i === 0) {
        w.u8(3).bytes(randomBytes(int(40, 200)));
        continue;
      }
      w.u8(1);
      struct(w, one, 'fungible_asset', i % 2 ? 'Deposit' : 'Withdraw', i % 3 ? [] : [aptosCoin]);
      w.bytes(randomBytes(int(40, 200)));
    }
    return w.done();
  };
  const ed25519 = (w) => w.u8(0).bytes(randomBytes(32)).bytes(randomBytes(64));
  const AUTHENTICATORS = [
    (w) => ed25519(w),
    (w) => ed25519(w.u8(4)),
    (w) => ed25519(ed25519(w.u8(3)).uleb(0).uleb(0).raw(account())),
    // SingleSender, SingleKey, a keyless key and a zero-knowledge signature.
    (w) => {
      w.u8(4).u8(2).u8(3).text('https://accounts.google.com').bytes(randomBytes(32));
      w.u8(3).u8(0).u8(0).raw(randomBytes(128)).u64(10_000_000).u8(0).u8(0).u8(1).u8(0).bytes(randomBytes(64));
      w.text('{"alg":"RS256","kid":"x","typ":"JWT"}').u64(1_800_000_000).u8(0).bytes(randomBytes(32));
      w.u8(0).bytes(randomBytes(64));
    },
  ];
  const user = () => {
    const w = new Writer().u8(0).raw(account()).u64(int(0, 1e6));
    // EntryFunction { module, function, ty_args, args }
    w.u8(2).raw(randomBytes(32)).text('router').text('swap_exact_input').uleb(2);
    aptosCoin(w);
    struct(w, randomBytes(32), 'coin', 'T');
    w.uleb(3).bytes(randomBytes(32)).bytes(randomBytes(8)).bytes(randomBytes(8));
    w.u64(200_000).u64(100).u64(1_800_000_000).u8(1);
    // SingleSender, SingleKey, an Ed25519 key, then a signature variant past the golden's.
    if (random() < unknownShare)
      w.u8(4)
        .u8(2)
        .u8(0)
        .bytes(randomBytes(32))
        .u8(40)
        .raw(randomBytes(int(64, 200)));
    else AUTHENTICATORS[int(0, 3)](w);
    return w.done();
  };
  const metadata = () =>
    new Writer()
      .u8(5)
      .u8(1)
      .raw(randomBytes(32))
      .u64(13473)
      .u64(int(0, 1e5))
      .raw(account())
      .bytes(randomBytes(18))
      .uleb(0)
      .u64(1_762_134_258_889_133n)
      .u8(1)
      .u64(13473)
      .u64(1)
      .bytes(randomBytes(32))
      .done();
  const epilogue = () =>
    new Writer().u8(6).u8(0).raw(randomBytes(32)).u8(0).u8(0).u8(0).u64(int(0, 1e4)).u64(int(0, 1e5)).done();

  const result = [];
  let version = BigInt(startVersion);
  for (let p = 0; p < pages; p++) {
    const start = version;
    const items = [];
    for (let i = 0; i < perPage; i++, version++) {
      const position = i % 20;
      const transaction = position === 0 ? metadata() : position === 19 ? epilogue() : user();
      const changes = position === 19 ? writeSet(0) : writeSet(position === 0 ? 3 : int(5, 15));
      const eventBytes = position === 19 ? events(0) : events(position === 0 ? 1 : int(2, 6));
      // TransactionInfo V0 { gas_used, status: Success, transaction_hash, event_root_hash, state_change_hash, state_checkpoint_hash, auxiliary_info_hash }
      const info = new Writer().u8(0).u64(int(5, 5000)).u8(0);
      info.raw(ledgerHash('Transaction', transaction)).raw(randomBytes(32)).raw(ledgerHash('WriteSet', changes));
      info.u8(position === 19 ? 1 : 0);
      if (position === 19) info.raw(randomBytes(32));
      info.u8(1).raw(randomBytes(32));
      items.push(
        new Writer()
          .u64(version)
          .raw(transaction)
          .raw(info.done())
          .raw(eventBytes)
          .raw(randomBytes(32))
          .raw(changes)
          .done(),
      );
    }
    result.push({ start, body: Buffer.concat([new Writer().uleb(perPage).done(), ...items]) });
  }
  return result;
}
