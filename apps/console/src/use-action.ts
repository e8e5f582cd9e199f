import { useState } from 'react';

export type Action = { busy: boolean; error: Error | null; run: (action: () => Promise<unknown>) => Promise<void> };

/** Runs a user action (save, archive, sign in): `busy` while it runs, its failure kept for an ErrorBanner. */
export function useAction(): Action {
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  async function run(action: () => Promise<unknown>): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, run };
}
