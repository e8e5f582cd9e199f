import type { MongoClientOptions } from 'mongodb';

/**
 * Bounded waits for every operation, used only where the URL does not set its own (the URL is the
 * configuration: `BERTH_STORE_URL=mongodb://…/berth?replicaSet=rs0&wtimeoutMS=5000` wins). The
 * driver's own defaults leave the socket, the connection pool and the replication wait unbounded,
 * and its `timeoutMS` is ignored in this version, so without them a write could block a kernel
 * holding a session's lock forever.
 */
export const MONGO_DEFAULTS = {
  serverSelectionTimeoutMS: 10_000,
  connectTimeoutMS: 10_000,
  socketTimeoutMS: 20_000,
  waitQueueTimeoutMS: 10_000,
  w: 'majority',
  wtimeoutMS: 10_000,
  // Reads outside a transaction (event lists and SSE replay, a get) see only majority-committed
  // data: an event a failover rolls back is never shown. Transactions read a snapshot instead.
  readConcernLevel: 'majority',
  retryWrites: true,
  retryReads: true,
} as const satisfies MongoClientOptions;

/** URL spellings of each option above (case-insensitive, as the driver reads them). */
const SPELLINGS: Readonly<Record<keyof typeof MONGO_DEFAULTS, readonly string[]>> = {
  serverSelectionTimeoutMS: ['serverselectiontimeoutms'],
  connectTimeoutMS: ['connecttimeoutms'],
  socketTimeoutMS: ['sockettimeoutms'],
  waitQueueTimeoutMS: ['waitqueuetimeoutms'],
  w: ['w'],
  wtimeoutMS: ['wtimeoutms', 'wtimeout'],
  readConcernLevel: ['readconcernlevel'],
  retryWrites: ['retrywrites'],
  retryReads: ['retryreads'],
};

/** The options of a connection string (`?a=1&b=2`), lower-cased, as given. */
export function urlOptions(url: string): ReadonlySet<string> {
  const query = url.indexOf('?');
  if (query < 0) return new Set();
  return new Set([...new URLSearchParams(url.slice(query + 1)).keys()].map((k) => k.toLowerCase()));
}

/** The client options Berth adds to a URL: each default the URL does not set itself. */
export function clientOptionsFor(url: string): MongoClientOptions {
  const given = urlOptions(url);
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(MONGO_DEFAULTS)) {
    if (!SPELLINGS[name as keyof typeof MONGO_DEFAULTS].some((s) => given.has(s))) options[name] = value;
  }
  return options as MongoClientOptions;
}

/** The resolved waits a client runs with (the URL's or the defaults). */
export type EffectiveWaits = Readonly<{ serverSelectionTimeoutMS: number; wtimeoutMS: number }>;

/**
 * How long a commit may keep retrying: one server selection (a failover) plus one replication
 * wait. Past it the commit fails as UNAVAILABLE and the command's redelivery takes over.
 */
export const commitDeadlineMs = (waits: EffectiveWaits): number => waits.serverSelectionTimeoutMS + (waits.wtimeoutMS > 0 ? waits.wtimeoutMS : MONGO_DEFAULTS.wtimeoutMS);

/** The database a connection string names (`mongodb://hosts/<db>?…`), else `berth` (the driver's own fallback would be `test`). */
export const databaseOf = (url: string): string => /^mongodb(?:\+srv)?:\/\/[^/?]+\/([^?/]+)/.exec(url)?.[1] ?? 'berth';
