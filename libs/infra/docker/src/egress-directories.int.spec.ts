import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EGRESS_BUILD_GRANT_FILE, EGRESS_NAME_FILE, EGRESS_SOCKET_SUBDIR, EgressDirectories } from './egress-directories';

let root: string;
let dirs: EgressDirectories;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'berth-egress-dirs-'));
  dirs = new EgressDirectories(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('EgressDirectories (a real directory tree)', () => {
  it('a directory appears with its socket directory and name already in it, and nothing staged is left', async () => {
    // What the egress does: on a change under the root, look into each sandbox directory at once.
    const seen: string[] = [];
    const watcher = watch(root, (_event, name) => {
      if (name !== null && /^[0-9a-f]{16}$/.test(name)) {
        const entries = readdirSync(join(root, name), { withFileTypes: true }).map((e) => `${e.name}${e.isDirectory() ? '/' : ''}`);
        seen.push(entries.sort().join(' '));
      }
    });
    try {
      for (let i = 0; i < 20; i++) await dirs.prepare(`berth-s-sesn_${i}-g1`);
      await new Promise<void>((resolve) => setImmediate(resolve));
    } finally {
      watcher.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([`${EGRESS_NAME_FILE} ${EGRESS_SOCKET_SUBDIR}/`]));
    expect(readdirSync(root).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('preparing a directory again keeps it and rewrites its name', async () => {
    const id = await dirs.prepare('berth-pool-env_1-abc');
    await dirs.rename(id, 'berth-s-sesn_1-g1');
    expect(await dirs.prepare('berth-pool-env_1-abc')).toBe(id);
    expect(readFileSync(join(root, id, EGRESS_NAME_FILE), 'utf8')).toBe('berth-pool-env_1-abc');
    expect(statSync(dirs.socketDir(id)).isDirectory()).toBe(true);
  });

  it("a build's directory holds its grant from the start", async () => {
    const id = await dirs.prepareBuild('berth-build-env_1', { environmentId: 'env_1', ecosystems: ['npm'], allowedHosts: ['registry.example'] });
    expect(JSON.parse(readFileSync(join(root, id, EGRESS_BUILD_GRANT_FILE), 'utf8'))).toEqual({ environment_id: 'env_1', ecosystems: ['npm'], allowed_hosts: ['registry.example'] });
  });

  it("prune removes a staged directory a dead manager left, not one another manager is making now", async () => {
    const old = join(root, '.new-00000000000000aa-0001');
    const young = join(root, '.new-00000000000000bb-0002');
    for (const dir of [old, young]) mkdirSync(join(dir, EGRESS_SOCKET_SUBDIR), { recursive: true });
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    utimesSync(old, twoMinutesAgo, twoMinutesAgo);
    await dirs.prune(new Set());
    expect(readdirSync(root)).toEqual(['.new-00000000000000bb-0002']);
  });
});
