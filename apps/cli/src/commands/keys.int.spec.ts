import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore } from '@berth/store';
import { runCli } from '../cli';
import { ExitCode } from '../exit-codes';

// `berth keys create` runs the gateway's key-creation step against a real SQLite file. Each case
// starts a Node process that compiles TypeScript on the fly: seconds on a busy machine.
const SPAWNS = 30_000;

describe('berth keys create', () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-keys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('mints a key whose hashed record lands in the store, printed once', async () => {
    const url = `sqlite:${join(dir, 'berth.db')}`;
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['keys', 'create', '--owner', 'owner_cli', '--name', 'ci', '--store', url, '--json'], { env: {}, io: { out: (t) => out.push(t), err: (t) => err.push(t) } });
    expect(err).toEqual([]);
    expect(code).toBe(ExitCode.ok);
    const issued = JSON.parse(out.join('\n'));
    expect(issued).toMatchObject({ owner_id: 'owner_cli', name: 'ci' });
    expect(issued.key).toMatch(/^bk_[a-z0-9]{12}_[A-Za-z0-9]{32}$/);

    const store = createStore(url);
    await store.init();
    try {
      const record = await store.apiKeys.byPrefix(issued.prefix);
      expect(record).toMatchObject({ owner_id: 'owner_cli', name: 'ci', revoked_at: null });
      expect(record?.hash).not.toContain(issued.key.split('_')[2]);
    } finally {
      await store.close();
    }
  }, SPAWNS);

  it('refuses an owner id the key step would not accept, as a usage error', async () => {
    const err: string[] = [];
    const code = await runCli(['keys', 'create', '--owner', 'bad owner!', '--store', `sqlite:${join(dir, 'x.db')}`], { env: {}, io: { out: () => undefined, err: (t) => err.push(t) } });
    expect(code).toBe(ExitCode.usage);
    expect(err).toEqual(["error: --owner must be 1-64 letters, digits, '_' or '-'"]);
  }, SPAWNS);
});
