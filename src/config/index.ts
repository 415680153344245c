// The config module: YAML + env → validated, typed, frozen Config.

export { ConfigSchema, LOG_LEVELS } from './schema.js';
export { DEFAULT_COSTS, type Priority } from './sections/tenants.js';
export type {
  Config,
  DeepReadonly,
  LogFormat,
  LogLevel,
  RedisConfig,
  RedisTarget,
  RoutingConfig,
  ServerConfig,
  TracingConfig,
  UpstreamConfig,
} from './schema.js';
export { loadConfig, parseConfig } from './load.js';
export type { LoadOptions } from './load.js';
export { ConfigError } from './errors.js';
export { type ConfiguredKey, keyIssues, resolveKey, resolveTenantKeys, sha256Hex } from './keys.js';
export type { ConfigIssue } from './errors.js';
export { applyEnv, ENV_OVERRIDES } from './env.js';
export { parseCli, CliError, USAGE } from './cli.js';
export type { CliArgs } from './cli.js';
export { SIM_URL } from './net.js';
export { redactUrl } from './redact.js';
export {
  keepsLatestAnswers,
  LATEST_ANSWERS_SHARE,
  type MemoryShares,
  memoryShares,
  SPELLINGS_SHARE,
} from './memory-shares.js';
