import { createServer } from 'node:net';
import { BerthError, ErrorCodes } from '@berth/core';
import { MongoClient, type Timestamp } from 'mongodb';
import { REFUSED_DELIVERY_ID, describeStoreContract } from './contract';
import { commitOf } from './contract/fixtures';
import { MongoStore } from './mongo/mongo-store';

const uri = process.env.MONGODB_URI;
if (!uri) {
  console.log('NOT RUN: the MongoDB half of the store contract (MONGODB_URI is not set; point it at a replica set, a single-node one is enough)');
}

// Without a server the whole contract is registered as skipped, so jest reports it as skipped.
(uri ? describe : describe.skip)('MongoDB', () => {
  let admin: MongoClient;
  let databases = 0;

  beforeAll(async () => {
    admin = await new MongoClient(uri as string).connect();
  });
  afterAll(async () => {
    await admin.close();
  });

  const freshDb = () => `berth_contract_${process.pid}_${++databases}`;

  describeStoreContract('MongoDB', async () => {
    const dbName = freshDb();
    const db = admin.db(dbName);
    // The server itself refuses the contract's refused webhook delivery.
    await db.createCollection('webhook_deliveries', { validator: { _id: { $ne: REFUSED_DELIVERY_ID } } });
    return {
      store: new MongoStore(uri as string, { dbName }),
      // A validator no document passes: the server itself refuses every write of a session row.
      failRowWrites: async () => {
        await db.command({ collMod: 'sessions', validator: { $expr: false }, validationLevel: 'strict', validationAction: 'error' });
        return async () => void (await db.command({ collMod: 'sessions', validator: {}, validationLevel: 'off' }));
      },
      dispose: async () => void (await db.dropDatabase()),
    };
  });

  it('journals one oplog entry per command (its transaction) and one per command for its outbox mark', async () => {
    const dbName = freshDb();
    const store = new MongoStore(uri as string, { dbName });
    await store.init();
    const oplog = admin.db('local').collection<{ ts: Timestamp; op: string; ns: string; o: { applyOps?: { ns: string }[] } }>('oplog.rs');
    const mine = (ns: string | undefined) => ns?.startsWith(`${dbName}.`) ?? false;
    const entriesSince = async (ts: Timestamp) =>
      (await oplog.find({ ts: { $gt: ts } }).toArray()).filter((e) => mine(e.ns) || (e.o.applyOps ?? []).some((op) => mine(op.ns)));
    const lastTs = async () => (await oplog.find({}).sort({ $natural: -1 }).limit(1).toArray())[0]?.ts as Timestamp;
    try {
      // What the kernel commits for a command that decided two events.
      const before = await lastTs();
      await store.journal.commit(commitOf('sesn_w', 1, 2, { commandId: 'cmd_w1' }));
      const commit = await entriesSince(before);
      // Two events, the outbox entry, the snapshot and the row: one applyOps entry.
      expect(commit.map((e) => e.o.applyOps?.length ?? e.op)).toEqual([5]);
      const marked = await lastTs();
      await store.journal.markPublished([{ sessionId: 'sesn_w', seqs: [1, 2] }]);
      expect((await entriesSince(marked)).map((e) => `${e.op} ${e.ns}`)).toEqual([`d ${dbName}.outbox`]);
    } finally {
      await store.close();
      await admin.db(dbName).dropDatabase();
    }
  });
});

describe('MongoStore without a reachable server', () => {
  it('fails init with a coded UNAVAILABLE error instead of hanging', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const store = new MongoStore(`mongodb://127.0.0.1:${closedPort}/berth?serverSelectionTimeoutMS=300&connectTimeoutMS=300`);
    try {
      const failure = await store.init().catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(BerthError);
      expect((failure as BerthError).code).toBe(ErrorCodes.UNAVAILABLE);
      expect((failure as BerthError).message).toMatch(/MongoDB is unreachable/);
    } finally {
      await store.close();
    }
  });

  it('answers a read with a coded UNAVAILABLE within the server selection timeout, never a raw driver error', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const store = new MongoStore(`mongodb://127.0.0.1:${closedPort}/berth?serverSelectionTimeoutMS=300`);
    try {
      const failure = await store.journal.lastSeq('sesn_1').catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(BerthError);
      expect(failure).toMatchObject({ code: ErrorCodes.UNAVAILABLE, status: 503 });
    } finally {
      await store.close();
    }
  });
});
