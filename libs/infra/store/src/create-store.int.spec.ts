import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { batch } from './contract/fixtures';
import { createStore } from './create-store';
import { MongoStore } from './mongo/mongo-store';
import { SqliteStore } from './sqlite/sqlite-store';

describe('createStore', () => {
  let dir: string;
  const opened: BerthStore[] = [];
  const open = (url: string): BerthStore => {
    const store = createStore(url);
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-create-store-'));
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens a working in-memory SQLite store for sqlite::memory:', async () => {
    const store = open('sqlite::memory:');
    expect(store).toBeInstanceOf(SqliteStore);
    await store.init();
    await store.journal.commit({ sessionId: 'sesn_1', events: batch('sesn_1', 1, 2) });
    expect(await store.journal.lastSeq('sesn_1')).toBe(2);
  });

  it('opens a SQLite file for sqlite:<path> and sqlite:///<absolute path>, creating parent directories', async () => {
    const plain = join(dir, 'a', 'berth.db');
    const triple = join(dir, 'b', 'berth.db');
    await open(`sqlite:${plain}`).init();
    await open(`sqlite://${triple}`).init();
    expect(existsSync(plain)).toBe(true);
    expect(existsSync(triple)).toBe(true);
  });

  it('keeps what was appended across reopening the same file', async () => {
    const url = `sqlite:${join(dir, 'berth.db')}`;
    const first = createStore(url);
    await first.init();
    await first.journal.commit({ sessionId: 'sesn_1', events: batch('sesn_1', 1, 3) });
    await first.close();
    const second = open(url);
    await second.init();
    expect((await second.journal.readEvents('sesn_1')).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('accepts ?synchronous=normal|full on a SQLite URL and refuses other options', async () => {
    await open(`sqlite:${join(dir, 'fast.db')}?synchronous=normal`).init();
    await open(`sqlite:${join(dir, 'safe.db')}?synchronous=full`).init();
    expect(existsSync(join(dir, 'fast.db'))).toBe(true);
    expect(() => createStore(`sqlite:${join(dir, 'x.db')}?synchronous=off`)).toThrow(ValidationError);
    expect(() => createStore(`sqlite:${join(dir, 'x.db')}?cache=shared`)).toThrow(/unknown option cache=shared/);
  });

  it('builds a MongoDB store for mongodb:// and mongodb+srv:// URLs without connecting yet', () => {
    expect(open('mongodb://127.0.0.1:1/berth')).toBeInstanceOf(MongoStore);
    expect(open('mongodb+srv://cluster.example.invalid/berth')).toBeInstanceOf(MongoStore);
  });

  it.each(['', 'postgres://localhost/berth', 'sqlite:', 'sqlite://relative.db', 'sqlite:///', 'berth.db'])('refuses %j with a ValidationError naming the accepted forms', (url) => {
    expect(() => createStore(url)).toThrow(ValidationError);
    expect(() => createStore(url)).toThrow(/sqlite|mongodb/);
  });

  it('does not echo credentials of a refused URL', () => {
    expect(() => createStore('redis://admin:hunter2@db.internal:6379')).toThrow(/redis:\/\/\*\*\*@db\.internal/);
    expect(() => createStore('redis://admin:hunter2@db.internal:6379')).not.toThrow(/hunter2/);
  });
});
