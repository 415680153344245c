export const SOAK_FIRST_VERSION: number;

export function latestKeysBelow(n: number): number;

export interface SoakReport {
  /** keys read, each twice */
  keys: number;
  byStatus: Record<string, number>;
  /** X-Cache of each key's second read */
  second: Record<string, number>;
  elapsedMs: number;
}
export function soak(
  url: string,
  options: { connections: number; maxKeys: number; durationMs: number; from?: number },
): Promise<SoakReport>;

export function residentBytes(pid: number): number;
export interface RssSample {
  /** ms since sampling started */
  at: number;
  bytes: number;
}
export function sampleRss(pid: number, everyMs: number): { samples: RssSample[]; stop(): RssSample[] };
export function peakBetween(samples: RssSample[], from: number, to: number): number;
export function statedOverheadBytes(readmeText: string): number;
