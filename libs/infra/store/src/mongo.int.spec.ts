import { createServer } from 'node:net';
import { BerthError, ErrorCodes } from '@berth/core';
import { MongoClient } from 'mongodb';
import { describeStoreContract } from './contract';
import { MongoStore } from './mongo/mongo-store';

const uri = process.env.MONGODB_URI;
if (!uri) console.log('skipped: MONGODB_URI not set (MongoDB store contract suite)');

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

  describeStoreContract('MongoDB', async () => {
    const dbName = `berth_contract_${process.pid}_${++databases}`;
    return { store: new MongoStore(uri as string, { dbName }), dispose: async () => void (await admin.db(dbName).dropDatabase()) };
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
});
