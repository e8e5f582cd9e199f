import { describeStoreContract } from './contract';
import { MongoClient } from 'mongodb';
import { MongoStore } from './mongo/mongo-store';

const uri = process.env.MONGODB_URI;
if (!uri) console.log('skipped: MONGODB_URI not set (MongoDB store contract suite)');

// Without a server the whole suite is registered as skipped, so jest reports it as skipped.
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
