/** Polls `condition` until it returns a truthy value (returned) or the timeout passes (throws). */
export async function waitUntil<T>(
  condition: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 20));
  }
}
