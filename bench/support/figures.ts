/** The p-th percentile of ascending `sorted` (nearest rank below). */
export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Runs `count` jobs with at most `window` in flight. */
export async function windowed(count: number, window: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(window, count) }, async () => {
      while (next < count) await job(next++);
    }),
  );
}
