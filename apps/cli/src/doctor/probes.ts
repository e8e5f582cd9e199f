import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import { connect as connectSocket } from 'node:net';
import { join } from 'node:path';
import { natsServers, Streams, Subjects } from '@berth/contracts';
import { readCredsFile } from '@berth/nats';
import { createStore } from '@berth/store';
import { jetstreamManager } from '@nats-io/jetstream';
import { AuthorizationError, credsAuthenticator } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { missingSqliteFile } from '../local/existing-store';
import type { CheckResult } from './report';

/** What doctor checks, from the same variables the services read (see docs/deploy.md). */
export type DoctorTargets = Readonly<{
  dockerHost: string;
  sandboxImage: string;
  natsUrl: string;
  /** The `.creds` file doctor connects with (its own read-only user), or none. */
  natsCreds: string | null;
  storeUrl: string;
  modelBaseUrl: string | null;
  /** The egress root: one directory per sandbox, each with the socket the egress serves it on. */
  egressDir: string;
  /** The gateway to ask for /readyz, when given. */
  apiUrl: string | null;
  timeoutMs: number;
}>;

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const mask = (url: string): string => url.replace(/(\/\/[^/:@]*):[^@/]*@/, '$1:***@');

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** One GET against the Docker engine's API (unix socket or tcp), without the docker CLI. */
function dockerGet(dockerHost: string, path: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  const target = dockerHost.startsWith('unix://')
    ? { socketPath: dockerHost.slice('unix://'.length) }
    : (() => {
        const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
        return { host: url.hostname, port: Number(url.port || 2375) };
      })();
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path, method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
}

export async function checkDocker(t: DoctorTargets): Promise<CheckResult[]> {
  let version: string;
  try {
    const res = await dockerGet(t.dockerHost, '/version', t.timeoutMs);
    if (res.status !== 200) throw new Error(`answered HTTP ${res.status}`);
    version = (JSON.parse(res.body) as { Version?: string }).Version ?? '?';
  } catch (e) {
    return [
      { name: 'docker engine', ok: false, detail: `${t.dockerHost}: ${message(e)}. Start Docker, or point DOCKER_HOST at an engine that runs (npm start starts one of its own).` },
      { name: 'sandbox image', ok: false, detail: `${t.sandboxImage}: not checked, no engine` },
    ];
  }
  const engine: CheckResult = { name: 'docker engine', ok: true, detail: `${t.dockerHost} (Docker ${version})` };
  try {
    const res = await dockerGet(t.dockerHost, `/images/${encodeURIComponent(t.sandboxImage)}/json`, t.timeoutMs);
    if (res.status === 200) return [engine, { name: 'sandbox image', ok: true, detail: `${t.sandboxImage} is on the engine` }];
    if (res.status === 404) {
      return [engine, { name: 'sandbox image', ok: false, detail: `${t.sandboxImage} is not on the engine: build it with scripts/docker/build-images.sh (npm start does), or set BERTH_SANDBOX_IMAGE` }];
    }
    throw new Error(`answered HTTP ${res.status}`);
  } catch (e) {
    return [engine, { name: 'sandbox image', ok: false, detail: `${t.sandboxImage}: ${message(e)}` }];
  }
}

export async function checkNats(t: DoctorTargets): Promise<CheckResult> {
  const name = 'nats';
  let nc: Awaited<ReturnType<typeof connect>> | null = null;
  try {
    const authenticator = t.natsCreds ? credsAuthenticator(readCredsFile(t.natsCreds)) : undefined;
    nc = await withTimeout(
      connect({ servers: natsServers(t.natsUrl), name: 'berth-doctor', inboxPrefix: Subjects.serviceInbox('doctor'), authenticator, timeout: t.timeoutMs, maxReconnectAttempts: 0, reconnect: false }),
      t.timeoutMs + 500,
      mask(t.natsUrl),
    );
  } catch (e) {
    if (e instanceof AuthorizationError) {
      const advice = t.natsCreds ? `the server refused ${t.natsCreds}: is it from this platform's nats-init?` : 'NATS requires credentials: set NATS_CREDS (or --nats-creds) to a .creds file; npm start writes .berth/nats-auth/creds/doctor.creds';
      return { name, ok: false, detail: `${mask(t.natsUrl)}: ${message(e)}. ${advice}` };
    }
    return { name, ok: false, detail: `${mask(t.natsUrl)}: ${message(e)}. Is nats-server running with -js, and is NATS_URL right?` };
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: t.timeoutMs });
    const missing: string[] = [];
    for (const stream of [Streams.commands, Streams.events]) {
      await jsm.streams.info(stream).catch(() => missing.push(stream));
    }
    if (missing.length > 0) return { name, ok: false, detail: `${mask(t.natsUrl)} answers but has no stream ${missing.join(', ')}: start the session-kernel once (it declares them)` };
    return { name, ok: true, detail: `${mask(t.natsUrl)}, JetStream streams ${Streams.commands} and ${Streams.events} present` };
  } catch (e) {
    return { name, ok: false, detail: `${mask(t.natsUrl)} answers but JetStream does not: ${message(e)}. Start nats-server with -js (--jetstream)` };
  } finally {
    await nc.close().catch(() => undefined);
  }
}

export async function checkStore(t: DoctorTargets): Promise<CheckResult> {
  const name = 'store';
  const shown = mask(t.storeUrl);
  const sqlite = missingSqliteFile(t.storeUrl);
  // Doctor reads; it never creates a database that was not there.
  if (sqlite !== null) {
    return { name, ok: false, detail: `${shown}: no database file at ${sqlite}. Has Berth run with this BERTH_STORE_URL? (npm start creates .berth/berth.db)` };
  }
  let store: ReturnType<typeof createStore>;
  try {
    store = createStore(t.storeUrl);
  } catch (e) {
    return { name, ok: false, detail: message(e) };
  }
  try {
    await withTimeout(
      (async () => {
        await store.init();
        await store.sessions.getById('sesn_doctor_probe');
      })(),
      t.timeoutMs,
      shown,
    );
    return { name, ok: true, detail: `${shown} answers` };
  } catch (e) {
    return { name, ok: false, detail: `${shown}: ${message(e)}` };
  } finally {
    await store.close().catch(() => undefined);
  }
}

export async function checkModel(t: DoctorTargets): Promise<CheckResult> {
  const name = 'model endpoint';
  if (t.modelBaseUrl === null) {
    return { name, ok: false, detail: 'BERTH_MODEL_BASE_URL is not set: turns fail until it is (or an environment sets config.model)' };
  }
  try {
    // Any HTTP answer (even 401 or 404) means the endpoint is reachable from here.
    const res = await fetch(t.modelBaseUrl, { method: 'GET', signal: AbortSignal.timeout(t.timeoutMs), redirect: 'manual' });
    return { name, ok: true, detail: `${t.modelBaseUrl} answers from this machine (HTTP ${res.status})` };
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause;
    return { name, ok: false, detail: `${t.modelBaseUrl} is unreachable from this machine: ${message(cause ?? e)}. Check the URL, DNS and any proxy or firewall` };
  }
}

export async function checkGateway(t: DoctorTargets): Promise<CheckResult | null> {
  if (t.apiUrl === null) return null;
  const name = 'gateway';
  try {
    const res = await fetch(`${t.apiUrl.replace(/\/$/, '')}/readyz`, { signal: AbortSignal.timeout(t.timeoutMs) });
    const body = (await res.json().catch(() => ({}))) as { checks?: Record<string, string> };
    const checks = Object.entries(body.checks ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');
    return res.ok ? { name, ok: true, detail: `${t.apiUrl} ready (${checks})` } : { name, ok: false, detail: `${t.apiUrl} is up but not ready: ${checks || `HTTP ${res.status}`}` };
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause;
    return { name, ok: false, detail: `${t.apiUrl} does not answer: ${message(cause ?? e)}. Is the gateway running (npm start)?` };
  }
}

const SANDBOX_DIR = /^[0-9a-f]{16}$/;
/** Sockets tried at most: enough to tell a stopped egress from a busy one. */
const EGRESS_SAMPLE = 20;

/** A connect only (no request): an HTTP request could reach the model or record a refusal. */
function socketAnswers(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectSocket(path);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The egress serves each sandbox on `<dir>/<id>/socket/egress.sock` (the layout of
 * libs/infra/docker's EgressDirectories). With no sandbox yet there is nothing to connect to: the
 * directory is all that can be checked.
 */
export async function checkEgress(t: DoctorTargets): Promise<CheckResult> {
  const name = 'egress';
  let ids: string[];
  try {
    ids = (await readdir(t.egressDir)).filter((entry) => SANDBOX_DIR.test(entry));
  } catch (e) {
    const why = (e as { code?: string }).code === 'ENOENT' ? 'does not exist' : `cannot be read (${message(e)})`;
    return { name, ok: false, detail: `${t.egressDir} ${why}. Is BERTH_EGRESS_DIR the directory the egress and the sandbox-manager use (npm start: .berth/egress)?` };
  }
  if (ids.length === 0) return { name, ok: true, detail: `${t.egressDir} exists, no sandbox in it yet (the egress is checked once there is one)` };
  const sample = ids.slice(0, EGRESS_SAMPLE);
  const answers = await Promise.all(sample.map((id) => socketAnswers(join(t.egressDir, id, 'socket', 'egress.sock'), t.timeoutMs)));
  const silent = answers.filter((ok) => !ok).length;
  if (silent === 0) return { name, ok: true, detail: `${t.egressDir}: the egress answers for ${sample.length} sandbox(es)` };
  return {
    name,
    ok: false,
    detail: `${t.egressDir}: no egress answers for ${silent} of ${sample.length} sandbox(es): their harnesses reach neither the model nor any host. Is the egress running (apps/egress), with this BERTH_EGRESS_DIR?`,
  };
}
