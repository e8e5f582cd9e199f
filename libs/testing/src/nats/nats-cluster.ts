import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subjects } from '@berth/contracts';
import { clusterConfig, clusterRoutePassword, connectNats, ensureNatsAuth, issueBerthUser, NatsAuthFiles, readAuthKeys, serverAuthConfig } from '@berth/nats';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort, natsProcess, natsServerBinary, type NatsServerHandle, type NatsTestUser } from './nats-server';
import { waitUntil } from './wait-until';

/** One node of a test cluster. */
export type NatsClusterNode = Readonly<{
  /** Its `server_name` (what a stream's `cluster.leader` names). */
  name: string;
  url: string;
  /** SIGKILLs it, as a crash would; `start()` brings it back on the same ports and store. */
  crash(): Promise<void>;
  start(): Promise<void>;
  alive(): boolean;
}>;

/** A cluster is used like one server (its `url` lists every node), plus its nodes. */
export type NatsClusterHandle = NatsServerHandle &
  Readonly<{
    nodes: readonly NatsClusterNode[];
    /** The node that leads a stream's Raft group now (null while it has none). */
    streamLeader(stream: string): Promise<NatsClusterNode | null>;
    /** Resolves once every node that is up reports JetStream healthy (a meta leader, its streams current). */
    healthy(timeoutMs?: number): Promise<void>;
  }>;

/**
 * Three (or `size`) JetStream nats-servers on loopback clustered by routes, each on free ports with
 * its own store and resolver directory, all with the same operator-mode auth as production
 * (`nats-init`'s server config, per-service users) and the same authenticated `cluster {}` block
 * `nats-init --cluster-routes` writes. Clients get every node in `url`.
 */
export async function startNatsCluster(options: { size?: number; startTimeoutMs?: number } = {}): Promise<NatsClusterHandle> {
  const size = options.size ?? 3;
  const binary = natsServerBinary();
  const storeDir = mkdtempSync(join(tmpdir(), 'berth-nats-cluster-'));
  const authDir = join(storeDir, 'auth');
  await ensureNatsAuth(authDir, join(storeDir, 'resolver'));
  const keys = readAuthKeys(authDir);
  writeFileSync(join(authDir, NatsAuthFiles.creds('admin')), await issueBerthUser(keys, 'admin', { publish: ['>'], subscribe: ['>'], respond: true }), { mode: 0o600 });
  const password = clusterRoutePassword(authDir);
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort(), http: await freePort() })));
  const routes = ports.map((p) => `127.0.0.1:${p.route}`);

  const nodes = await Promise.all(
    ports.map(async (p, i) => {
      const name = `berth-nats-${i + 1}`;
      const dir = join(storeDir, name);
      mkdirSync(dir);
      const configFile = join(dir, 'nats.conf');
      writeFileSync(
        configFile,
        [
          `server_name: ${name}`,
          'host: 127.0.0.1',
          `port: ${p.client}`,
          `http: "127.0.0.1:${p.http}"`,
          `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`,
          // The same operator, accounts and preloads on every node; each keeps its own resolver directory.
          await serverAuthConfig(keys, join(dir, 'resolver')),
          clusterConfig({ name: 'berth', listen: `127.0.0.1:${p.route}`, routes, password }),
        ].join('\n'),
      );
      const process = natsProcess(binary, configFile, p.client, options.startTimeoutMs ?? 15_000);
      let up = false;
      const node: NatsClusterNode & { http: number; halt(): Promise<void> } = {
        name,
        url: `nats://127.0.0.1:${p.client}`,
        http: p.http,
        async crash() {
          up = false;
          await process.halt('SIGKILL');
        },
        async start() {
          await process.start();
          up = true;
        },
        alive: () => up,
        async halt() {
          up = false;
          await process.halt();
        },
      };
      return node;
    }),
  );
  const url = nodes.map((n) => n.url).join(',');
  const credsFile = (user: NatsTestUser) => join(authDir, NatsAuthFiles.creds(user));
  const connect = (user: NatsTestUser = 'admin', name = `test-${user}`) => connectNats({ url, name, credsFile: credsFile(user), inboxPrefix: Subjects.serviceInbox(user) });

  const healthy = async (timeoutMs = 30_000): Promise<void> => {
    await waitUntil(
      async () => {
        for (const n of nodes.filter((x) => x.alive())) {
          const res = await fetch(`http://127.0.0.1:${n.http}/healthz`);
          if (!res.ok) return false;
        }
        return true;
      },
      { timeoutMs, intervalMs: 100, what: 'every running NATS node to report JetStream healthy' },
    );
  };
  const stopAll = async () => {
    for (const n of nodes) await n.halt();
  };

  try {
    await Promise.all(nodes.map((n) => n.start()));
    await healthy();
  } catch (e) {
    await stopAll();
    rmSync(storeDir, { recursive: true, force: true });
    throw e;
  }
  return {
    url,
    port: Number(new URL(nodes[0].url).port),
    storeDir,
    authDir,
    credsFile,
    issuerFile: join(authDir, NatsAuthFiles.issuer),
    env: (service) => ({ NATS_URL: url, NATS_CREDS: credsFile(service) }),
    connect,
    nodes,
    healthy,
    async streamLeader(stream) {
      const nc = await connect('admin', 'test-leader-probe');
      try {
        const leader = (await (await jetstreamManager(nc)).streams.info(stream)).cluster?.leader;
        return nodes.find((n) => n.name === leader) ?? null;
      } finally {
        await nc.close();
      }
    },
    async stop() {
      await stopAll();
      rmSync(storeDir, { recursive: true, force: true });
    },
    async restart() {
      await stopAll();
      await Promise.all(nodes.map((n) => n.start()));
    },
    kill: stopAll,
    async crash() {
      for (const n of nodes) await n.crash();
    },
  };
}

