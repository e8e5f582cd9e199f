import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostLocks } from './host-lock';

describe('HostLocks (the loop workspaces\' lock across sandbox-managers on one host)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-host-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one holder at a time into a key, whichever instance asks, and other keys run beside it', async () => {
    const [a, b] = [new HostLocks(dir), new HostLocks(dir)];
    let inside = 0;
    let most = 0;
    const order: string[] = [];
    const work = (name: string) => async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 15));
      order.push(name);
      inside--;
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).run('ws_1', work(`w${i}`))));
    expect(most).toBe(1);
    expect(order).toHaveLength(8);

    let other = false;
    await a.run('ws_1', async () => {
      await b.run('ws_2', async () => void (other = true));
    });
    expect(other).toBe(true);
  });

  it('breaks a lock left by a process of this host that died holding it, and releases on a throw', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    mkdirSync(join(dir, 'ws_1.lock'));
    writeFileSync(join(dir, 'ws_1.lock', 'holder'), `${hostname()} ${dead}`);
    const locks = new HostLocks(dir);
    expect(await locks.run('ws_1', async () => 'got it')).toBe('got it');

    await expect(locks.run('ws_1', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await locks.run('ws_1', async () => 'again')).toBe('again');
  });
});
