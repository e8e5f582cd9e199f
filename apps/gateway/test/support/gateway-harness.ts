// The gateway must not import application code, but its tests need the real kernel behind the bus.
/* eslint-disable @nx/enforce-module-boundaries */
import { silentLogger } from '@berth/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomIds, systemClock } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { createSessionKernel } from '@berth/session-kernel';
import { createStore } from '@berth/store';
import { createGatewayApp } from '../../src/app/create-gateway-app';
import type { GatewayOptions } from '../../src/app/gateway-deps';
import { issueApiKey } from '../../src/auth/api-key';
import { NO_SANDBOX } from '@berth/session-use-cases';
import { FakeTurnRunner } from './fake-turn-runner';
import { InMemoryEventFeed } from './in-memory-event-feed';
import { InProcessCommandBus } from './in-process-command-bus';

export type GatewayHarness = Readonly<{
  url: string;
  app: NestExpressApplication;
  store: BerthStore;
  bus: InProcessCommandBus;
  feed: InMemoryEventFeed;
  /** API keys of two owners. */
  keyA: string;
  keyB: string;
  close(): Promise<void>;
}>;

/**
 * A running gateway on a free loopback port: SQLite in memory, the real session kernel in-process, the live feed
 * in memory and (unless disabled) a fake turn runner answering turns.
 */
export async function startGateway(options: { turnRunner?: boolean; gateway?: Partial<GatewayOptions> } = {}): Promise<GatewayHarness> {
  const store = createStore('sqlite::memory:');
  await store.init();
  const feed = new InMemoryEventFeed();
  const kernel = createSessionKernel({ journal: store.journal, snapshots: store.snapshots, clock: systemClock });
  const bus = new InProcessCommandBus(kernel, store.journal, feed);
  const runner = options.turnRunner === false ? null : new FakeTurnRunner(bus, (listener) => feed.onEvent(listener));
  const app = await createGatewayApp({
    store,
    commandBus: bus,
    eventFeed: feed,
    sandboxProbe: { probe: async () => NO_SANDBOX },
    readiness: [{ name: 'store', check: async () => void (await store.sessions.getById('sesn_readiness')) }],
    options: options.gateway,
    log: silentLogger,
  });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const key = async (owner: string) => {
    const issued = issueApiKey({ ownerId: owner, name: 'test', id: randomIds.next('bk'), now: new Date() });
    await store.apiKeys.insert(issued.record);
    return issued.key;
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    store,
    bus,
    feed,
    keyA: await key('owner_a'),
    keyB: await key('owner_b'),
    async close() {
      runner?.close();
      await app.close();
      await store.close();
    },
  };
}
