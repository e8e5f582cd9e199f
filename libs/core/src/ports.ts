import { randomBytes } from 'node:crypto';
import type { IdPrefix } from './ids';

/** Time as a port: domain code never reads the wall clock. */
export interface Clock {
  now(): Date;
}

/** Id generation as a port: domain code never draws random numbers. */
export interface IdGenerator {
  next(prefix: IdPrefix): string;
}

export const systemClock: Clock = { now: () => new Date() };

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Time-ordered ids (`<prefix>_<10 chars time><16 chars random>`): sortable by creation, so list
 * cursors and logs read in order, and unguessable enough to name resources.
 */
export const randomIds: IdGenerator = {
  next(prefix) {
    let t = Date.now();
    let time = '';
    for (let i = 0; i < 10; i++) {
      time = CROCKFORD[t % 32] + time;
      t = Math.floor(t / 32);
    }
    const bytes = randomBytes(16);
    let rand = '';
    for (const b of bytes) rand += CROCKFORD[b % 32];
    return `${prefix}_${time}${rand}`;
  },
};
