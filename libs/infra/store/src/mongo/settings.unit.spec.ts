import { MongoClient } from 'mongodb';
import { clientOptionsFor, commitDeadlineMs, databaseOf, MONGO_DEFAULTS } from './settings';

// Resolved by the driver itself (no connection is made), as MongoStore builds its client.
const resolved = (url: string) => new MongoClient(url, clientOptionsFor(url)).options;

describe('MongoDB client settings', () => {
  it('bounds every wait and asks for majority writes and majority reads when the URL says nothing', () => {
    const options = resolved('mongodb://db1,db2/berth?replicaSet=rs0');
    expect(options.serverSelectionTimeoutMS).toBe(MONGO_DEFAULTS.serverSelectionTimeoutMS);
    expect(options.socketTimeoutMS).toBe(MONGO_DEFAULTS.socketTimeoutMS);
    expect(options.waitQueueTimeoutMS).toBe(MONGO_DEFAULTS.waitQueueTimeoutMS);
    expect(options.connectTimeoutMS).toBe(MONGO_DEFAULTS.connectTimeoutMS);
    expect(options.writeConcern).toMatchObject({ w: 'majority', wtimeoutMS: MONGO_DEFAULTS.wtimeoutMS });
    expect(options.readConcern).toMatchObject({ level: 'majority' });
    expect(options.retryWrites).toBe(true);
    expect(options.dbName).toBe('berth');
  });

  it("keeps the URL's own options, whatever their case", () => {
    const options = resolved('mongodb://db/berth?replicaSet=rs0&w=1&WTIMEOUTMS=2500&socketTimeoutMS=5000&serverSelectionTimeoutMS=3000&readPreference=secondaryPreferred&readConcernLevel=local');
    expect(options.writeConcern).toMatchObject({ w: 1, wtimeoutMS: 2500 });
    expect(options.readConcern).toMatchObject({ level: 'local' });
    expect(options.socketTimeoutMS).toBe(5000);
    expect(options.serverSelectionTimeoutMS).toBe(3000);
    expect(options.readPreference.mode).toBe('secondaryPreferred');
    expect(options.waitQueueTimeoutMS).toBe(MONGO_DEFAULTS.waitQueueTimeoutMS);
  });

  it('adds nothing the URL set, spelled the old way or not', () => {
    expect(clientOptionsFor('mongodb://db/berth?wtimeout=100&retryWrites=false')).not.toHaveProperty('wtimeoutMS');
    expect(clientOptionsFor('mongodb://db/berth?wtimeout=100&retryWrites=false')).not.toHaveProperty('retryWrites');
    expect(clientOptionsFor('mongodb+srv://cluster.example.invalid/berth')).toMatchObject({ w: 'majority' });
  });

  it('uses the database the URL names, else berth', () => {
    expect(databaseOf('mongodb://u:p@db1:27017,db2:27017/tenant_a?replicaSet=rs0')).toBe('tenant_a');
    expect(databaseOf('mongodb+srv://cluster.example.invalid/prod')).toBe('prod');
    expect(databaseOf('mongodb://db1/?replicaSet=rs0')).toBe('berth');
    expect(databaseOf('mongodb://db1')).toBe('berth');
  });

  it('lets a commit retry for one server selection plus one replication wait', () => {
    expect(commitDeadlineMs({ serverSelectionTimeoutMS: 10_000, wtimeoutMS: 10_000 })).toBe(20_000);
    expect(commitDeadlineMs({ serverSelectionTimeoutMS: 3_000, wtimeoutMS: 0 })).toBe(3_000 + MONGO_DEFAULTS.wtimeoutMS);
  });
});
