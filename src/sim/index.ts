// The simulated node: a test fixture, demo upstream and bench target.
export { startSim, type SimNode, type SimOptions, type SimWritesOption } from './server.js';
export { SimSparseModel, type SimWrite, type SimWriteOp } from './sparse/model.js';
export {
  simSparseUniverse,
  type SimKeyKind,
  type SimKeySchedule,
  type SimSparseOptions,
  type SimUniverse,
  type SimUniverseKey,
} from './sparse/universe.js';
export { simVersionKind, simUserVersion, type SimVersionKind } from './sparse/schedule.js';
export { simKeyRequests, type SimKeyRequest } from './sparse/requests.js';
export { simSaltedHash, simStateKey, simStateKeyHash, simStructTag, type SimStateKeySpec } from './sparse/keys.js';
export { SIM_TRANSACTIONS_PAGE_SIZE } from './feed/page.js';
export { simFeedTransaction, SIM_DELIMITABLE_VARIANTS, type SimUnknownVariant } from './feed/transaction.js';
export {
  SimLedger,
  simLedgerInfo,
  startAutoAdvance,
  SIM_GENESIS_TIMESTAMP_USEC,
  SIM_USEC_PER_VERSION,
  SIM_VERSIONS_PER_BLOCK,
  SIM_VERSIONS_PER_EPOCH,
  type SimLedgerOptions,
} from './state/ledger.js';
export { SIM_REQUEST_LOG_SIZE, type SimCounters, type SimRecordedRequest } from './counters.js';
export {
  SIM_DEFAULT_SLOW_MS,
  SIM_FAULT_MODES,
  SIM_FEED_MODES,
  type SimFault,
  type SimFaultMode,
  type SimFaults,
  type SimFeedMode,
} from './faults.js';
export { SIM_ROUTES, classifyRoute, type SimRoute } from './routes.js';
export { simTableItem, SIM_VALUE_PERIOD } from './state/tables.js';
export {
  simAccountExists,
  simAssetBalance,
  simModules,
  simResources,
  simSequenceNumber,
  SIM_COIN,
  type SimModule,
  type SimResource,
} from './state/accounts.js';
export { simTransactionHash, type SimMempool } from './state/transactions.js';
export { simBcsTableKey } from './handlers/table-item.js';
export { decodeNodeStateKey, type SimStateKeyRead, type SimStatePath, type SimStructTag } from './parse/state-key.js';
export { SIM_MAX_PAGE_SIZE } from './state/pages.js';
export {
  simBalance,
  findSimView,
  checkSimArity,
  runSimView,
  SIM_FUNCTIONS,
  SIM_VIEW_GAS,
  SIM_MODULE_ADDRESS,
  SIM_MODULE_NAME,
  SIM_BURN_LIMIT,
  SIM_BALANCE_MODULUS,
  VM_ABORTED,
  VM_OUT_OF_GAS,
  type SimArg,
  type SimFunction,
  type SimValue,
} from './state/views.js';
export { encodeBcsValues, encodeJsonValues } from './state/view-codec.js';
export { simModuleAbi, simModuleJson, SIM_MODULE_BYTECODE } from './state/abi.js';
export { SIM_BODY_LIMIT_BYTES } from './http-io.js';
export { SIM_CORS_MAX_AGE_SECONDS, SIM_CORS_METHODS } from './cors.js';
