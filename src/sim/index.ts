// The simulated node: a test fixture, demo upstream and bench target.
export { startSim, type SimNode, type SimOptions } from './server.js';
export { SimSparseModel } from './sparse/model.js';
export { simSparseUniverse, type SimSparseOptions, type SimUniverseKey } from './sparse/universe.js';
export { simVersionKind, simUserVersion } from './sparse/schedule.js';
export { simKeyRequests } from './sparse/requests.js';
export { simSaltedHash, simStateKey, simStateKeyHash, simStructTag } from './sparse/keys.js';
export { SIM_TRANSACTIONS_PAGE_SIZE } from './feed/page.js';
export {
  SimLedger,
  simLedgerInfo,
  startAutoAdvance,
  SIM_GENESIS_TIMESTAMP_USEC,
  SIM_VERSIONS_PER_BLOCK,
} from './state/ledger.js';
export type { SimRecordedRequest } from './counters.js';
export { SIM_FAULT_MODES, SIM_FEED_MODES, type SimFault, type SimFaultMode } from './faults.js';
export type { SimRoute } from './routes.js';
export { simTableItem, SIM_VALUE_PERIOD } from './state/tables.js';
export { simAccountExists, simResources } from './state/accounts.js';
export { simTransactionHash } from './state/transactions.js';
export { simBcsTableKey } from './handlers/table-item.js';
export {
  simBalance,
  findSimView,
  runSimView,
  SIM_VIEW_GAS,
  SIM_MODULE_ADDRESS,
  VM_ABORTED,
  VM_OUT_OF_GAS,
} from './state/views.js';
export { encodeBcsValues, encodeJsonValues } from './state/view-codec.js';
export { simModuleJson } from './state/abi.js';
export { SIM_CORS_MAX_AGE_SECONDS } from './cors.js';
