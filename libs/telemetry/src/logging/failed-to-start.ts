import { secretScrubber, secretValuesOf } from './secret-scrubber';

/**
 * The last word of a service that could not start (bad configuration, store or broker
 * unreachable): one JSON line on stderr in the same shape as its other lines, then exit 1.
 * It does not need the logger, which may be what failed.
 */
export const failedToStart =
  (service: string, env: NodeJS.ProcessEnv = process.env) =>
  (error: unknown): never => {
    const line = JSON.stringify({
      level: 'error',
      time: new Date().toISOString(),
      service,
      msg: `${service} failed to start: ${error instanceof Error ? error.message : String(error)}`,
    });
    process.stderr.write(`${secretScrubber(secretValuesOf(env))(line)}\n`);
    process.exit(1);
  };
