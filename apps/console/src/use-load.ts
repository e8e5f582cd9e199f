import { useCallback, useEffect, useState } from 'react';

export type Loaded<T> = { data: T | null; error: Error | null; loading: boolean; reload: () => void };

/** Runs `load` when its inputs change and on `reload()`; a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  // Callers list the inputs of `load` in `deps`, as with useCallback.
  const run = useCallback(load, deps);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    run().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error: Error) => current && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      current = false;
    };
  }, [run, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
