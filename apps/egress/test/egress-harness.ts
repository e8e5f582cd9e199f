import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import type { CredentialRecord, SessionCommand, VaultRecord } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { EgressDirectories, EGRESS_SOCKET_SUBDIR } from '@berth/docker';
import type { BerthStore, CommandBus, ImageBuildGrant, SecretBox } from '@berth/ports';
import { AesGcmSecretBox, loadOrCreateCertificateAuthority, parseSecretKeys, type CertificateAuthority } from '@berth/secrets';
import { createSessionKernel } from '@berth/session-kernel';
import { createStore } from '@berth/store';
import { silentLogger } from '@berth/testing';
import { startEgress, type EgressInput, type RunningEgress } from '../src/app/start-egress';

export type Answer = Readonly<{ status: number; headers: IncomingHttpHeaders; body: string }>;

/** A command bus that only remembers what it was given (the egress only dispatches). */
export class RecordingBus implements CommandBus {
  readonly dispatched: SessionCommand[] = [];
  async send(): Promise<never> {
    throw new Error('the egress never waits for outcomes');
  }
  async dispatch(command: SessionCommand): Promise<void> {
    this.dispatched.push(command);
  }
}

const silent = silentLogger;

/** A gateway's store and key ring the egress shares (it reads what that gateway wrote), and the owner of the sessions made here. */
export type SharedPlatform = Readonly<{ store: BerthStore; secrets: SecretBox; owner: string }>;

/**
 * An egress over a real SQLite store (its own, or a gateway's: `shared`) and real unix sockets,
 * with sessions made through the real kernel: what the sandbox-manager and gateway would have
 * written, without them.
 */
export class EgressHarness {
  readonly dir = mkdtempSync('/tmp/bge-');
  readonly root = join(this.dir, 'e');
  readonly dirs = new EgressDirectories(this.root);
  readonly bus = new RecordingBus();
  /** The key ring the gateway would seal vault credentials with; the egress opens them with it. */
  readonly secrets: SecretBox;
  readonly owner: string;
  store!: BerthStore;
  egress!: RunningEgress;
  /** The egress's CA (made in the harness's directory): a client standing in for a sandbox trusts it. */
  ca!: CertificateAuthority;
  private counter = 0;

  constructor(
    private readonly options: Partial<EgressInput> & Pick<EgressInput, 'model' | 'keys'>,
    private readonly shared?: SharedPlatform,
  ) {
    this.secrets = shared?.secrets ?? new AesGcmSecretBox(parseSecretKeys(`test:${randomBytes(32).toString('base64')}`));
    this.owner = shared?.owner ?? 'owner_e';
  }

  async start(): Promise<this> {
    if (this.shared) {
      this.store = this.shared.store;
    } else {
      this.store = createStore(`sqlite:${join(this.dir, 'berth.db')}`);
      await this.store.init();
    }
    this.ca = await loadOrCreateCertificateAuthority(join(this.dir, 'ca'), 'Berth egress CA test');
    await this.startEgress();
    return this;
  }

  async startEgress(): Promise<void> {
    this.egress = await startEgress({
      root: this.root,
      store: this.store,
      secrets: this.secrets,
      bus: () => this.bus,
      clock: systemClock,
      log: silent,
      upstreamProxy: null,
      ca: this.ca,
      upstreamCa: [],
      platformHosts: [],
      connectTimeoutMs: 2_000,
      contextCacheMs: 1,
      rescanMs: 200,
      ...this.options,
    });
  }

  async stop(): Promise<void> {
    await this.egress?.stop();
    if (!this.shared) await this.store?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * An environment, an agent and a session bound to sandbox `berth-s-<id>-g1` (with its egress
   * directory served); returns the socket path a sandbox of that session would use.
   */
  async sandbox(
    config: Record<string, unknown>,
    agentConfig: Record<string, unknown> = {},
    harness: 'claude-code' | 'codex' = 'claude-code',
    vaultIds: readonly string[] = [],
  ): Promise<{ socket: string; sessionId: string; environmentId: string }> {
    const n = ++this.counter;
    const owner = this.owner;
    const environmentId = `env_e${n}`;
    const agentId = `agent_e${n}`;
    const sessionId = `sesn_e${n}${Date.now().toString(36)}`;
    const now = new Date().toISOString();
    await this.store.environments.put({ id: environmentId, owner_id: owner, name: 'e', description: null, config, metadata: {}, created_at: now, updated_at: now, archived_at: null, deleted: false });
    await this.store.agents.putVersion({ id: agentId, owner_id: owner, version: 1, name: 'a', config: agentConfig, created_at: now, updated_at: now, archived_at: null }, 0);
    const kernel = createSessionKernel({ journal: this.store.journal, snapshots: this.store.snapshots, clock: systemClock });
    const meta = (i: number) => ({ command_id: `cmd_${sessionId}_${i}`, actor: owner, issued_at: now });
    const name = `berth-s-${sessionId}-g1`;
    for (const [i, command] of [
      commandFor('CreateSession', sessionId, createSessionData({ owner_id: owner, agent: { id: agentId, version: 1 }, environment_id: environmentId, harness, vault_ids: [...vaultIds] }), meta(1)),
      commandFor('BindSandbox', sessionId, { sandbox_id: name, generation: 1, expires_at: null, warm: false }, meta(2)),
    ].entries()) {
      const outcome = await kernel.execute(command);
      if (!outcome.ok) throw new Error(`${command.type} refused: ${JSON.stringify(outcome)}`);
      void i;
    }
    const id = await this.dirs.prepare(name);
    await this.egress.sockets.scanned();
    return { socket: join(this.dirs.socketDir(id), 'egress.sock'), sessionId, environmentId };
  }

  /**
   * A vault of `owner` with one credential for `mcpServerUrl`, sealed as the gateway seals it: a
   * bearer token, or an `mcp_oauth` one when `expiresAt` is given (written to the store as is, past or not).
   */
  async vault(mcpServerUrl: string, token: string, owner = this.owner, expiresAt?: string | null): Promise<{ vault: VaultRecord; credential: CredentialRecord }> {
    const n = ++this.counter;
    const now = new Date().toISOString();
    const vault: VaultRecord = { id: `vlt_e${n}`, owner_id: owner, display_name: 'v', metadata: {}, created_at: now, updated_at: now, archived_at: null };
    const id = `vcrd_e${n}`;
    const credential: CredentialRecord = {
      id,
      owner_id: owner,
      vault_id: vault.id,
      display_name: null,
      metadata: {},
      auth: expiresAt === undefined ? { type: 'static_bearer', mcp_server_url: new URL(mcpServerUrl).href } : { type: 'mcp_oauth', mcp_server_url: new URL(mcpServerUrl).href, expires_at: expiresAt },
      secret: this.secrets.seal(JSON.stringify({ value: token }), id),
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    await this.store.vaults.put(vault);
    await this.store.vaults.putCredential(credential);
    return { vault, credential };
  }

  /** A vault of the harness's owner with one `environment_variable` credential, sealed as the gateway seals it. */
  async variableVault(
    secretName: string,
    secret: string,
    networking: { type: 'unrestricted' } | { type: 'limited'; allowed_hosts: string[] },
    injection = { header: true, body: false },
  ): Promise<{ vault: VaultRecord; credential: CredentialRecord }> {
    const n = ++this.counter;
    const now = new Date().toISOString();
    const vault: VaultRecord = { id: `vlt_e${n}`, owner_id: this.owner, display_name: 'v', metadata: {}, created_at: now, updated_at: now, archived_at: null };
    const id = `vcrd_e${n}`;
    const credential: CredentialRecord = {
      id,
      owner_id: this.owner,
      vault_id: vault.id,
      display_name: null,
      metadata: {},
      auth: { type: 'environment_variable', secret_name: secretName, networking, injection_location: injection },
      secret: this.secrets.seal(JSON.stringify({ value: secret }), id),
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    await this.store.vaults.put(vault);
    await this.store.vaults.putCredential(credential);
    return { vault, credential };
  }

  /** The directory of an image build's container (`berth-b-…`) with its grant; returns the socket and the directory id. */
  async build(grant: ImageBuildGrant): Promise<{ socket: string; id: string }> {
    const id = await this.dirs.prepareBuild(`berth-b-${randomBytes(8).toString('hex')}`, grant);
    await this.egress.sockets.scanned();
    return { socket: join(this.root, id, EGRESS_SOCKET_SUBDIR, 'egress.sock'), id };
  }

  /** A directory for a container that is no session's (a warm one not yet claimed). */
  async unclaimed(name: string): Promise<string> {
    const id = await this.dirs.prepare(name);
    await this.egress.sockets.scanned();
    return join(this.root, id, EGRESS_SOCKET_SUBDIR, 'egress.sock');
  }
}

/** One HTTP request through a sandbox socket (origin- or absolute-form `path`). */
export function viaSocket(socketPath: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** CONNECT through a sandbox socket; on 200, speaks plain HTTP through the tunnel and returns that answer too. */
export function connectVia(socketPath: string, authority: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string; tunnelled: string | null }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: authority });
    req.on('connect', (res, socket: Socket, head: Buffer) => {
      let data = head.toString('utf8');
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (data += c));
      if (res.statusCode !== 200) {
        socket.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data, tunnelled: null }));
        return;
      }
      socket.write(`GET /through HTTP/1.1\r\nHost: ${authority.split(':')[0]}\r\nConnection: close\r\n\r\n`);
      socket.on('end', () => resolve({ status: 200, headers: res.headers, body: '', tunnelled: data }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * An HTTPS request as a sandbox client makes it through its proxy: CONNECT host:port on the socket,
 * TLS inside trusting only `ca` (for `servername`, the host by default), then one request. Returns
 * the answer and the certificate the client was shown; rejects when the handshake fails.
 */
export async function httpsVia(
  socketPath: string,
  host: string,
  port: number,
  path: string,
  options: { ca: string; servername?: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer & { certificate: string }> {
  const raw = await new Promise<Socket>((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: `${host}:${port}` });
    req.on('connect', (res, socket: Socket) => (res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT answered ${res.statusCode}`))));
    req.on('error', reject);
    req.end();
  });
  const tls = await new Promise<ReturnType<typeof tlsConnect>>((resolve, reject) => {
    const socket = tlsConnect({ socket: raw, servername: options.servername ?? host, ca: [options.ca], ALPNProtocols: ['http/1.1'] }, () => resolve(socket));
    socket.once('error', reject);
  });
  const certificate = `-----BEGIN CERTIFICATE-----\n${tls.getPeerCertificate().raw.toString('base64')}\n-----END CERTIFICATE-----\n`;
  return new Promise((resolve, reject) => {
    const req = request({ createConnection: () => tls, host, path, method: options.method ?? 'GET', headers: { connection: 'close', ...options.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        tls.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, certificate });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
