/** Labelled places where chaos tests make the sandbox-manager die with SIGKILL. */
export const CRASH_POINTS = ['mid-turn', 'after-sandbox-start-before-bind', 'after-turn-end-before-complete'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export type CrashPoints = Readonly<{ reached(point: CrashPoint): void }>;

/** Dies at the armed point without any cleanup, as `kill -9` would, so chaos tests can restart us. */
export const crashPointsArmedAt = (armed: CrashPoint | null): CrashPoints => ({
  reached(point) {
    if (point === armed) process.kill(process.pid, 'SIGKILL');
  },
});

export const noCrashPoints: CrashPoints = { reached: () => undefined };
