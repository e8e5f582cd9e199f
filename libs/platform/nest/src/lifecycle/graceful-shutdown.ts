import type { Logger } from '@berth/ports';

export type ShutdownStep = Readonly<{ name: string; run: () => Promise<unknown> }>;

/**
 * Runs the steps in order on SIGTERM/SIGINT (once), then exits. Services pass: stop pulling and
 * drain in-flight (app.close), drain the NATS connection, close the store — so no message is acked
 * after its effects were abandoned, and nothing is cut mid-write.
 */
export function onShutdownSignals(steps: readonly ShutdownStep[], log: Logger, signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): void {
  let started = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (started) return;
    started = true;
    log.info('shutting down', { signal });
    let failed = false;
    for (const step of steps) {
      try {
        await step.run();
      } catch (e) {
        failed = true;
        log.error(`shutdown step failed: ${step.name}`, { err: e });
      }
    }
    log.info(failed ? 'stopped, with errors' : 'stopped');
    process.exit(failed ? 1 : 0);
  };
  for (const signal of signals) process.once(signal, (s) => void shutdown(s));
}
