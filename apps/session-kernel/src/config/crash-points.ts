import type { CrashPoint } from './kernel.config';

export type CrashPoints = Readonly<{ reached(point: CrashPoint): void }>;

/** Dies at the armed point without any cleanup, as `kill -9` would, so chaos tests can restart us. */
export const crashPointsArmedAt = (armed: CrashPoint | null): CrashPoints => ({
  reached(point) {
    if (point === armed) process.kill(process.pid, 'SIGKILL');
  },
});
