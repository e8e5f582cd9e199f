import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

/** One request the endpoint received, as a test checks it: the grant, and how the client authenticated. */
export type TokenEndpointRequest = Readonly<{
  grantType: string | null;
  refreshToken: string | null;
  /** How the client authenticated: HTTP Basic, id and secret in the form, or the id alone. */
  method: ClientAuthMethod;
  clientId: string | null;
  clientSecret: string | null;
  scope: string | null;
  resource: string | null;
  contentType: string | null;
  answered: number;
}>;

/** A scripted answer for the next request(s), instead of the endpoint's own judgment. */
export type ScriptedTokenAnswer = Readonly<{ status: number; body: unknown }>;

export type ScriptedTokenEndpointOptions = Readonly<{
  clientId: string;
  /** The method the endpoint requires; a request authenticated otherwise is `401 invalid_client`. */
  method: ClientAuthMethod;
  clientSecret?: string;
  /** The refresh token the endpoint starts with (the one a test gives Berth). */
  refreshToken: string;
  /** The access token valid at start (the one a test gives Berth). */
  accessToken: string;
  /** `expires_in` of the tokens it issues (seconds). */
  expiresInSeconds?: number;
}>;

const token = (prefix: string, n: number) => `${prefix}_${n}_${randomBytes(6).toString('hex')}`;

/**
 * An OAuth 2.0 token endpoint on loopback (`POST /token`) that serves the refresh_token grant as a
 * strict server would: each refresh token works once (it rotates), the client must authenticate
 * with its method, and only the latest access token is current (what `currentAccessToken` gives
 * an MCP server that accepts nothing else). Records every request; can hold the next request
 * until released, answer scripted errors, or revoke the grant.
 */
export class ScriptedTokenEndpoint {
  private readonly server: Server;
  private readonly recorded: TokenEndpointRequest[] = [];
  private readonly used = new Set<string>();
  private validRefreshToken: string | null;
  private access: string;
  private issued = 0;
  private scripted: ScriptedTokenAnswer[] = [];
  private held: { arrived: () => void; released: Promise<void> } | null = null;
  private releaseHeld: () => void = () => undefined;

  constructor(private readonly options: ScriptedTokenEndpointOptions) {
    this.validRefreshToken = options.refreshToken;
    this.access = options.accessToken;
    this.server = createServer((req, res) => void this.receive(req, res));
  }

  get url(): string {
    const address = this.server.address() as AddressInfo | null;
    if (address === null) throw new Error('token endpoint is not listening; call start() first');
    return `http://127.0.0.1:${address.port}/token`;
  }

  /** The access token an MCP server behind this authorization server accepts now. */
  get currentAccessToken(): string {
    return this.access;
  }

  /** The refresh token that works now (null once revoked). */
  get currentRefreshToken(): string | null {
    return this.validRefreshToken;
  }

  get requests(): readonly TokenEndpointRequest[] {
    return this.recorded;
  }

  /** How many requests presented this refresh token. */
  uses(refreshToken: string): number {
    return this.recorded.filter((r) => r.refreshToken === refreshToken).length;
  }

  /** The next requests get these answers, in order, whatever they carry. */
  answerNext(...answers: ScriptedTokenAnswer[]): void {
    this.scripted.push(...answers);
  }

  /** The grant is withdrawn (the user revoked the app): every refresh token is `invalid_grant` from now on. */
  revoke(): void {
    this.validRefreshToken = null;
  }

  /** Holds the next request until `release()`; `arrived` resolves once it is being held. */
  hold(): { arrived: Promise<void>; release: () => void } {
    const released = new Promise<void>((resolve) => (this.releaseHeld = resolve));
    const arrived = new Promise<void>((resolve) => (this.held = { arrived: resolve, released }));
    return { arrived, release: () => this.releaseHeld() };
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    this.releaseHeld();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += (chunk as Buffer).toString('utf8');
    const held = this.held;
    if (held !== null) {
      this.held = null;
      held.arrived();
      await held.released;
    }
    const form = new URLSearchParams(body);
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const [basicId, basicSecret] = basic === undefined ? [] : Buffer.from(basic, 'base64').toString('utf8').split(':').map((p) => decodeURIComponent(p.replace(/\+/g, ' ')));
    const method: ClientAuthMethod = basic !== undefined ? 'client_secret_basic' : form.has('client_secret') ? 'client_secret_post' : 'none';
    const answer = this.answer(form, method, basicId ?? form.get('client_id'), basicSecret ?? form.get('client_secret'));
    this.recorded.push({
      grantType: form.get('grant_type'),
      refreshToken: form.get('refresh_token'),
      method,
      clientId: basicId ?? form.get('client_id'),
      clientSecret: basicSecret ?? form.get('client_secret'),
      scope: form.get('scope'),
      resource: form.get('resource'),
      contentType: req.headers['content-type'] ?? null,
      answered: answer.status,
    });
    res.writeHead(answer.status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(answer.body));
  }

  private answer(form: URLSearchParams, method: ClientAuthMethod, clientId: string | null, clientSecret: string | null): ScriptedTokenAnswer {
    const scripted = this.scripted.shift();
    if (scripted !== undefined) return scripted;
    if (form.get('grant_type') !== 'refresh_token') return { status: 400, body: { error: 'unsupported_grant_type' } };
    const { options } = this;
    if (method !== options.method || clientId !== options.clientId || (method !== 'none' && clientSecret !== options.clientSecret)) {
      return { status: 401, body: { error: 'invalid_client', error_description: `expected ${options.method} for ${options.clientId}` } };
    }
    const presented = form.get('refresh_token');
    if (presented === null || presented !== this.validRefreshToken || this.used.has(presented)) {
      return { status: 400, body: { error: 'invalid_grant', error_description: `refresh token ${presented ?? '(none)'} is not valid (used, revoked or unknown)` } };
    }
    this.issued++;
    this.access = token('at', this.issued);
    // It rotates, as strict servers do: a new refresh token with each refresh, the used one refused.
    this.used.add(presented);
    this.validRefreshToken = token('rt', this.issued);
    return { status: 200, body: { access_token: this.access, token_type: 'Bearer', expires_in: options.expiresInSeconds ?? 3600, refresh_token: this.validRefreshToken } };
  }
}
