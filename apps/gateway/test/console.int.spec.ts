import { silentLogger } from '@berth/testing';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { systemClock } from '@berth/core';
import { createStore } from '@berth/store';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createGatewayApp } from '../src/app/create-gateway-app';
import { NO_SANDBOX } from '@berth/session-use-cases';

describe('console files and the API key command', () => {
  let dir: string;
  let app: NestExpressApplication;
  let url: string;
  const store = createStore('sqlite::memory:');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Berth</title>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    await store.init();
    app = await createGatewayApp({
      store,
      commandBus: { send: async () => Promise.reject(new Error('unused')), dispatch: async () => undefined },
      eventFeed: { subscribe: async () => ({ close: () => undefined }) },
      sandboxProbe: { probe: async () => NO_SANDBOX },
      clock: systemClock,
      consoleDir: dir,
      log: silentLogger,
    });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the console at /console/ without a key, with index.html for client-side routes', async () => {
    const asset = await fetch(`${url}/console/assets/app.js`);
    expect(asset.status).toBe(200);
    expect(await asset.text()).toBe('console.log(1)');
    for (const path of ['/console/', '/console/sessions/sesn_1']) {
      const page = await fetch(url + path);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>Berth</title>');
    }
    expect((await fetch(`${url}/v1/agents`)).status).toBe(401);
  });

  it('create-api-key prints a key the gateway accepts, and stores only its hash', async () => {
    const db = join(dir, 'keys.db');
    const run = spawnSync(process.execPath, ['-r', '@swc-node/register', 'apps/gateway/src/cli/create-api-key.ts', '--owner', 'cli_owner', '--store', `sqlite:${db}`, '--quiet'], {
      cwd: join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    const key = run.stdout.trim();
    expect(key).toMatch(/^bk_[a-z0-9]{12}_[A-Za-z0-9]{32}$/);
    const keys = createStore(`sqlite:${db}`);
    await keys.init();
    try {
      const record = await keys.apiKeys.byPrefix(key.split('_').slice(0, 2).join('_'));
      expect(record).toMatchObject({ owner_id: 'cli_owner' });
      expect(JSON.stringify(record)).not.toContain(key.split('_')[2]);
    } finally {
      await keys.close();
    }
    const refused = spawnSync(process.execPath, ['-r', '@swc-node/register', 'apps/gateway/src/cli/create-api-key.ts', '--owner', 'not valid', '--store', `sqlite:${db}`], {
      cwd: join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--owner must be');
  }, 30_000);
});
