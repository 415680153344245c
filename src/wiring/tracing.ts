// Tracing, when tracing.otlpEndpoint is set: the OpenTelemetry SDK is imported only
// then, so with tracing off no SDK module loads and no request makes a span.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { packageVersion } from '../process/version.js';
import type { TracingSdk } from '../tracing/sdk.js';

/**
 * The OpenTelemetry SDK, when tracing.otlpEndpoint is set. Loaded only then:
 * with tracing off no SDK module is imported and no request makes a span.
 */
export async function startTracingIf(config: Config, logger: Logger): Promise<TracingSdk | undefined> {
  const { otlpEndpoint, ...settings } = config.tracing;
  if (otlpEndpoint === undefined) return undefined;
  const { startTracing } = await import('../tracing/sdk.js');
  logger.info(
    { serviceName: settings.serviceName, sampleRatio: settings.sampleRatio },
    'tracing: spans are sent to tracing.otlpEndpoint',
  );
  return startTracing(settings, otlpEndpoint, logger, packageVersion());
}
