import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * deploy/compose as `docker compose config` sees it (Debian's docker-compose, installed by
 * npm test): each variant is valid, and renders to what docs/deploy.md promises. Bringing the
 * stack up needs the nats and mongo images from a registry, which cannot be reached here: the
 * berth image itself is built and run in berth-image.int.spec.ts.
 */
const DIR = join(__dirname, '..', '..', 'deploy', 'compose');
const SERVICES = ['gateway', 'session-kernel', 'turn-reconciler', 'sandbox-manager', 'egress'];

type Service = { profiles?: string[]; command?: string[]; read_only?: boolean; cap_drop?: string[]; image?: string; ports?: unknown[]; volumes?: string[]; environment?: Record<string, string>; depends_on?: Record<string, unknown>; networks?: unknown };
type Rendered = { services: Record<string, Service>; networks: Record<string, { internal?: boolean }> };

function compose(files: string[], args: string[], env: Record<string, string> = {}) {
  return spawnSync('docker-compose', ['--env-file', '.env.example', ...files.flatMap((f) => ['-f', f]), ...args], {
    cwd: DIR,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
}

/** The merged configuration as data (docker-compose's own YAML, read with the PyYAML it ships with). */
function rendered(files: string[], env: Record<string, string> = {}): Rendered {
  const result = compose(files, ['config'], env);
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(execFileSync('python3', ['-c', 'import json,sys,yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: result.stdout, encoding: 'utf8' })) as Rendered;
}

describe('deploy/compose', () => {
  beforeAll(() => {
    const version = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
    if (version.status !== 0) throw new Error('docker-compose is not installed: npm test installs it (apt docker-compose)');
  });

  it.each([
    ['SQLite (default)', ['docker-compose.yml'], {}],
    ['MongoDB', ['docker-compose.yml', 'docker-compose.mongo.yml'], {}],
    ['observability profile', ['docker-compose.yml'], { COMPOSE_PROFILES: 'observability' }],
    ['three-node NATS cluster', ['docker-compose.yml', 'docker-compose.nats-cluster.yml'], {}],
    ['three-node NATS cluster on MongoDB', ['docker-compose.yml', 'docker-compose.nats-cluster.yml', 'docker-compose.mongo.yml'], {}],
    ['three-member MongoDB replica set', ['docker-compose.yml', 'docker-compose.mongo.yml', 'docker-compose.mongo-replica-set.yml'], {}],
  ])('%s is valid', (_name, files, env) => {
    const result = compose(files, ['config', '-q'], env);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('runs NATS and the five services on SQLite by default, with only the gateway, NATS (and Grafana) published, on loopback', () => {
    const c = rendered(['docker-compose.yml']);
    const started = Object.entries(c.services).filter(([, s]) => s.profiles === undefined).map(([n]) => n);
    expect(started.sort()).toEqual(['egress', 'gateway', 'nats', 'sandbox-manager', 'session-kernel', 'turn-reconciler']);
    expect(c.services['prometheus'].profiles).toEqual(['observability']);
    for (const name of SERVICES) {
      expect(c.services[name]).toMatchObject({ read_only: true, cap_drop: ['ALL'] });
      expect(c.services[name].environment).toMatchObject({ NATS_URL: 'nats://nats:4222', BERTH_STORE_URL: 'sqlite:/var/lib/berth/berth.db?synchronous=full', BERTH_LOG_FORMAT: 'json', BERTH_METRICS_PORT: '9464' });
    }
    const published = Object.entries(c.services).filter(([, s]) => (s.ports ?? []).length > 0).map(([n]) => n);
    // Grafana only with --profile observability, also on loopback; NATS for outside subscribers (credentials required).
    expect(published.sort()).toEqual(['gateway', 'grafana', 'nats']);
    expect(JSON.stringify(c.services['nats'].ports)).toContain('127.0.0.1');
    expect(JSON.stringify(c.services['grafana'].ports)).toContain('127.0.0.1');
    expect(JSON.stringify(c.services['gateway'].ports)).toContain('127.0.0.1');
    expect(c.networks['backend'].internal).toBe(true);
  });

  it('gives the model key to the egress only, and the egress directory to the egress and the sandbox-manager at the same host path', () => {
    const c = rendered(['docker-compose.yml'], { BERTH_MODEL_API_KEY: 'sk-compose-check' });
    const withKey = Object.entries(c.services).filter(([, s]) => JSON.stringify(s.environment ?? {}).includes('sk-compose-check')).map(([n]) => n);
    expect(withKey).toEqual(['egress']);
    for (const name of ['egress', 'sandbox-manager']) {
      expect(c.services[name].volumes).toContain('/run/berth/egress:/run/berth/egress:rw');
      expect(c.services[name].environment?.['BERTH_EGRESS_DIR']).toBe('/run/berth/egress');
    }
  });

  it("keeps the egress's CA in a volume only the egress mounts (no other service, and so no sandbox, sees its key)", () => {
    const c = rendered(['docker-compose.yml']);
    const withCa = Object.entries(c.services).filter(([, s]) => (s.volumes ?? []).some((v) => v.startsWith('egress-ca:'))).map(([n]) => n);
    expect(withCa).toEqual(['egress']);
    expect(c.services['egress'].environment?.['BERTH_EGRESS_CA_DIR']).toBe('/var/lib/berth-egress-ca');
    expect(c.services['egress'].volumes).toContain('egress-ca:/var/lib/berth-egress-ca:rw');
  });

  it('gives the Docker socket to the sandbox-manager only', () => {
    const c = rendered(['docker-compose.yml', 'docker-compose.mongo.yml']);
    const withSocket = Object.entries(c.services).filter(([, s]) => (s.volumes ?? []).some((v) => v.startsWith('/var/run/docker.sock'))).map(([n]) => n);
    expect(withSocket).toEqual(['sandbox-manager']);
  });

  it('points every service at MongoDB, a single-node replica set, after it is healthy, with the MongoDB overlay', () => {
    const c = rendered(['docker-compose.yml', 'docker-compose.mongo.yml']);
    expect(c.services['mongo'].command).toEqual(['mongod', '--replSet', 'rs0', '--keyFile', '/data/db/berth-replica.key', '--bind_ip_all']);
    for (const name of SERVICES) {
      expect(c.services[name].environment?.['BERTH_STORE_URL']).toBe('mongodb://berth:change-me@mongo:27017/berth?authSource=admin&replicaSet=rs0');
      expect(c.services[name].depends_on).toMatchObject({ mongo: { condition: 'service_healthy' }, nats: { condition: 'service_healthy' } });
    }
  });

  it('runs three NATS nodes with the cluster overlay, each on its own volume and name, every service listing all three and the streams declared with three replicas', () => {
    const c = rendered(['docker-compose.yml', 'docker-compose.nats-cluster.yml']);
    const nodes = ['nats', 'nats-2', 'nats-3'];
    expect(nodes.map((n) => c.services[n].environment?.['NATS_SERVER_NAME'])).toEqual(['berth-nats-1', 'berth-nats-2', 'berth-nats-3']);
    const dataVolumes = nodes.map((n) => (c.services[n].volumes ?? []).find((v) => v.endsWith(':/data:rw'))?.split(':')[0]);
    expect(new Set(dataVolumes).size).toBe(3);
    for (const n of nodes) {
      expect(c.services[n].volumes).toEqual(expect.arrayContaining([expect.stringMatching(/deploy\/nats\/cluster\.conf:\/etc\/nats\/nats\.conf:ro$/), expect.stringMatching(/nats-auth\/cluster\.conf:\/etc\/nats\/auth\/cluster\.conf:ro$/)]));
      expect(JSON.stringify(c.services[n].ports)).toContain('127.0.0.1');
    }
    // nats-init writes the authenticated routes block for exactly these three nodes.
    expect(c.services['nats-init'].command?.slice(-2)).toEqual(['--cluster-routes', 'nats:6222,nats-2:6222,nats-3:6222']);
    for (const name of SERVICES) expect(c.services[name].environment?.['NATS_URL']).toBe('nats://nats:4222,nats://nats-2:4222,nats://nats-3:4222');
    expect(c.services['session-kernel'].environment?.['BERTH_NATS_STREAM_REPLICAS']).toBe('3');
    expect(c.services['gateway'].environment?.['BERTH_NATS_STREAM_REPLICAS']).toBe('3');
  });

  it('runs MongoDB as a three-member replica set with the replica-set overlay: one key for all, a volume each, every service on all three members with majority writes', () => {
    type Member = Service & { healthcheck?: { test?: string[] }; entrypoint?: string[] };
    const c = rendered(['docker-compose.yml', 'docker-compose.mongo.yml', 'docker-compose.mongo-replica-set.yml']) as unknown as { services: Record<string, Member> };
    const members = ['mongo', 'mongo-2', 'mongo-3'];
    const dataVolumes = members.map((m) => (c.services[m].volumes ?? []).find((v) => v.endsWith(':/data/db:rw')));
    expect(new Set(dataVolumes).size).toBe(3);
    for (const m of members) {
      expect(c.services[m].volumes).toContain('mongo-key:/etc/berth-mongo:rw');
      expect(c.services[m].command).toEqual(['mongod', '--replSet', 'rs0', '--keyFile', '/data/db/berth-replica.key', '--bind_ip_all']);
      expect(c.services[m].ports).toBeUndefined();
    }
    // Initiated once with all three members; healthy when the set has a primary.
    const init = (c.services['mongo'].healthcheck?.test ?? []).join(' ');
    for (const m of members) expect(init).toContain(`host: '${m}:27017'`);
    for (const name of SERVICES) {
      const url = c.services[name].environment?.['BERTH_STORE_URL'] ?? '';
      expect(url).toBe('mongodb://berth:change-me@mongo:27017,mongo-2:27017,mongo-3:27017/berth?authSource=admin&replicaSet=rs0');
      // No w= or readConcernLevel= in the URL: Berth's defaults (majority) apply.
      expect(url).not.toMatch(/[?&](w|readConcernLevel)=/i);
    }
  });

  it('refuses the MongoDB overlay without a password, naming the variable', () => {
    const result = spawnSync('docker-compose', ['-f', 'docker-compose.yml', '-f', 'docker-compose.mongo.yml', 'config', '-q'], { cwd: DIR, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('set MONGO_PASSWORD in .env');
  });
});
