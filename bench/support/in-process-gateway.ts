/**
 * The gateway with the session kernel in-process on a SQLite file in a temp dir, nothing published
 * live (every stream is a journal replay), one API key, and an agent + environment to start
 * sessions with: the setup the HTTP benchmarks share.
 */
import { silentLogger } from '@berth/testing';
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomIds, systemClock } from '@berth/core';
import { createSessionKernel } from '@berth/session-kernel';
import { createStore } from '@berth/store';
import { createGatewayApp } from '../../apps/gateway/src/app/create-gateway-app';
import { issueApiKey } from '../../apps/gateway/src/auth/api-key';
import { NO_SANDBOX } from '@berth/session-use-cases';

export async function startInProcessGateway(name: string) {
  const dir = mkdtempSync(join(process.env.BERTH_BENCH_DIR ?? tmpdir(), `berth-bench-${name}-`));
  const store = createStore(`sqlite:${join(dir, 'berth.db')}`);
  await store.init();
  const kernel = createSessionKernel({ journal: store.journal, snapshots: store.snapshots, clock: systemClock });
  const app = await createGatewayApp({
    store,
    commandBus: { send: (command) => kernel.execute(command), dispatch: async (command) => void (await kernel.execute(command)) },
    eventFeed: { subscribe: async () => ({ close: () => undefined }) },
    sandboxProbe: { probe: async () => NO_SANDBOX },
    log: silentLogger,
  });
  const close = async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const issued = issueApiKey({ ownerId: 'bench', name: 'bench', id: randomIds.next('bk'), now: new Date() });
    await store.apiKeys.insert(issued.record);
    const key = issued.key;
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { id: string };
    };
    const agent = await post('/v1/agents', { name: 'bench', model: 'claude-sonnet-4-5' });
    const env = await post('/v1/environments', { name: 'bench' });
    return { store, kernel, base, key, headers, post, agent, env, close };
  } catch (e) {
    await close();
    throw e;
  }
}
