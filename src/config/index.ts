// The config module: YAML + env → validated, typed, frozen Config.

export { DEFAULT_COSTS, type Priority } from './sections/tenants.js';
export type { Config, LogFormat, LogLevel, RedisConfig } from './schema.js';
export { loadConfig, parseConfig } from './load.js';
export { ConfigError } from './errors.js';
export { type ConfiguredKey, resolveKey, resolveTenantKeys, sha256Hex } from './keys.js';
export { parseCli, CliError, USAGE } from './cli.js';
export type { CliArgs } from './cli.js';
export { SIM_URL } from './net.js';
export { redactUrl } from './redact.js';
export { keepsLatestAnswers, memoryShares } from './memory-shares.js';
