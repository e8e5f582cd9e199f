import { ReadPreference, type ClientSession } from 'mongodb';
import type { Collections } from './collections';

/** What every MongoDB facet shares: the collections, and transactions run with the store's bounds. */
export type MongoContext = Readonly<{
  c: Collections;
  /** Runs `work` in one transaction (see `inTransaction`); `retryOn` names our own errors that mean "run it again". */
  transaction<T>(work: (session: ClientSession) => Promise<T>, retryOn?: (error: unknown) => boolean): Promise<T>;
  /** Runs `work` with reads at one point in time (a snapshot session), for the inspection. */
  atOnePointInTime<T>(work: (session: ClientSession) => Promise<T>): Promise<T>;
}>;

/**
 * Reads that must see the last acknowledged write (a command's load, its duplicate check, a get
 * right after a put) go to the primary whatever the URL's readPreference; lists may follow it.
 */
export const PRIMARY = { readPreference: ReadPreference.primary } as const;
