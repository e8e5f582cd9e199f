import { Logger } from '@nestjs/common';

export type ShutdownStep = Readonly<{ name: string; run: () => Promise<unknown> }>;

/**
 * Runs the steps in order on SIGTERM/SIGINT (once), then exits. Services pass: stop pulling and
 * drain in-flight (app.close), drain the NATS connection, close the store — so no message is acked
 * after its effects were abandoned, and nothing is cut mid-write.
 */
export function onShutdownSignals(steps: readonly ShutdownStep[], signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): void {
  const log = new Logger('Shutdown');
  let started = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (started) return;
    started = true;
    log.log(`${signal}: shutting down`);
    let failed = false;
    for (const step of steps) {
      try {
        await step.run();
      } catch (e) {
        failed = true;
        log.error(`${step.name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    process.exit(failed ? 1 : 0);
  };
  for (const signal of signals) process.once(signal, (s) => void shutdown(s));
}
