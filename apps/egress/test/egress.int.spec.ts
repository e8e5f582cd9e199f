import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AnthropicMessagesServer, OpenAiResponsesServer, ScriptedUpstreamProxy, freePort } from '@berth/testing';
import { connectVia, EgressHarness, viaSocket } from './egress-harness';

jest.setTimeout(30_000);

const KEY = 'sk-the-real-key-only-the-egress-has';
const messages = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, stream: false, messages: [{ role: 'user', content: 'hi' }] });
const limited = (allowed_hosts: string[], extra: Record<string, unknown> = {}) => ({ type: 'cloud', networking: { type: 'limited', allowed_hosts, ...extra } });

describe('the egress proxy, through real sandbox sockets', () => {
  let model: AnthropicMessagesServer;
  let responses: OpenAiResponsesServer;
  let upstream: ScriptedUpstreamProxy;
  let egress: EgressHarness;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    responses = await new OpenAiResponsesServer().start();
    upstream = await new ScriptedUpstreamProxy({ 'allowed.test': { body: 'hello from allowed.test\n' }, 'also.test': { body: 'also\n' } }).start();
    egress = await new EgressHarness({
      model: { baseUrl: model.url, trustedHosts: ['localhost'] },
      keys: { BERTH_MODEL_API_KEY: KEY, BERTH_MODEL_KEY_OPENAI: 'sk-openai-real' },
      upstreamProxy: upstream.url,
    }).start();
  });
  afterAll(async () => {
    await egress?.stop();
    await Promise.all([model?.close(), responses?.close(), upstream?.close()]);
  });

  describe('model access', () => {
    it('forwards the harness to the model endpoint with the real key in place of its placeholder', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud' });
      const answer = await viaSocket(socket, '/v1/messages?beta=true', { method: 'POST', headers: { 'x-api-key': 'placeholder', 'content-type': 'application/json' }, body: messages });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'OK' }] });
      expect(model.modelRequests.at(-1)).toMatchObject({ path: '/v1/messages', query: { beta: 'true' } });
      expect(model.sawCredential(KEY)).toBe(true);
      expect(model.sawCredential('placeholder')).toBe(false);
    });

    it("puts a Codex sandbox's key in Authorization, from the key its environment names", async () => {
      const { socket } = await egress.sandbox({ type: 'cloud', model: { base_url: responses.url.replace('127.0.0.1', 'localhost'), api_key_env: 'BERTH_MODEL_KEY_OPENAI' } }, {}, 'codex');
      const answer = await viaSocket(socket, '/v1/responses', { method: 'POST', headers: { authorization: 'Bearer placeholder', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'hi', stream: false }) });
      expect(answer.status).toBe(200);
      expect(responses.sawCredential('sk-openai-real')).toBe(true);
      expect(responses.sawCredential(KEY)).toBe(false);
    });

    it('forwards nothing outside the model API', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud' });
      const before = model.requests.length;
      for (const path of ['/containers/json', '/v1/../containers/json', '/']) {
        const answer = await viaSocket(socket, path, { headers: { 'x-api-key': 'placeholder' } });
        expect(answer.status).toBe(404);
        expect(JSON.parse(answer.body).error.message).toContain('forwards only model API paths');
      }
      expect(model.requests.length).toBe(before);
    });

    it('answers an unreachable endpoint at once, naming it, and tells Claude Code not to retry', async () => {
      const closed = await freePort();
      const { socket } = await egress.sandbox({ type: 'cloud', model: { base_url: `http://localhost:${closed}` } });
      const started = Date.now();
      const answer = await viaSocket(socket, '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: messages });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(answer.status).toBe(502);
      expect(answer.headers['x-should-retry']).toBe('false');
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining(`model endpoint http://localhost:${closed}`) } });
    });

    it('sends a request again when the endpoint had closed the kept-alive connection it went out on', async () => {
      // An endpoint that drops each connection at its second request, unanswered, as one closing idle connections does when a request crosses the close.
      const seen = new Map<Socket, number>();
      let requests = 0;
      const endpoint = createServer((req, res) => {
        requests += 1;
        const count = (seen.get(req.socket) ?? 0) + 1;
        seen.set(req.socket, count);
        if (count > 1) return void req.socket.destroy();
        req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"message","content":[]}'));
      });
      await new Promise<void>((done) => endpoint.listen(0, '127.0.0.1', done));
      try {
        const { port } = endpoint.address() as AddressInfo;
        const { socket } = await egress.sandbox({ type: 'cloud', model: { base_url: `http://localhost:${port}` } });
        const ask = () => viaSocket(socket, '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: messages });
        expect((await ask()).status).toBe(200);
        const second = await ask();
        expect(second.status).toBe(200);
        expect(requests).toBe(3);
      } finally {
        endpoint.closeAllConnections();
        await new Promise((done) => endpoint.close(done));
      }
    });

    it("holds an environment's own endpoint on a private address to the platform rule", async () => {
      const { socket } = await egress.sandbox({ type: 'cloud', model: { base_url: 'http://127.0.0.1:4222' } });
      const answer = await viaSocket(socket, '/v1/messages', { method: 'POST', body: messages });
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.message).toContain('BERTH_MODEL_TRUSTED_HOSTS');
    });

    it('still serves the model to a sandbox with network none', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud', network: 'none' });
      expect((await viaSocket(socket, '/v1/messages', { method: 'POST', body: messages })).status).toBe(200);
    });
  });

  describe('other destinations', () => {
    it('lets an unrestricted sandbox reach a host over plain HTTP and through CONNECT', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud' });
      expect(await viaSocket(socket, 'http://allowed.test/hello')).toMatchObject({ status: 200, body: 'hello from allowed.test\n' });
      const tunnel = await connectVia(socket, 'allowed.test:443');
      expect(tunnel.status).toBe(200);
      expect(tunnel.tunnelled).toContain('hello from allowed.test');
      expect(upstream.requests.filter((r) => r.host === 'allowed.test').map((r) => r.kind)).toEqual(expect.arrayContaining(['http', 'connect']));
    });

    it('lets a limited sandbox reach its allowed hosts only; a refusal says why, and is reported once', async () => {
      const { socket, sessionId, environmentId } = await egress.sandbox(limited(['allowed.test']));
      expect((await viaSocket(socket, 'http://allowed.test/')).status).toBe(200);
      const refused = await viaSocket(socket, 'http://also.test/');
      expect(refused.status).toBe(403);
      expect(refused.headers['x-berth-egress-denied']).toBe('host_not_allowed');
      expect(refused.body).toContain(`Berth egress refused also.test:80: environment ${environmentId} has limited networking and "also.test" is not in config.networking.allowed_hosts`);
      const tunnel = await connectVia(socket, 'also.test:443');
      expect(tunnel.status).toBe(403);
      expect(tunnel.body).toContain('is not in config.networking.allowed_hosts');
      await viaSocket(socket, 'http://also.test/again');
      expect(upstream.requests.some((r) => r.host === 'also.test' && r.served && r.kind === 'http' && r.path === '/')).toBe(false);
      const reported = egress.bus.dispatched.filter((c) => c.meta.session_id === sessionId);
      expect(reported.map((c) => c.type)).toEqual(['ReportEgressDenied', 'ReportEgressDenied']);
      expect(reported.map((c) => c.data)).toEqual([
        expect.objectContaining({ host: 'also.test', port: 80, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts', generation: 1 }),
        expect.objectContaining({ host: 'also.test', port: 443, reason: 'host_not_allowed' }),
      ]);
    });

    it('refuses every host with network none, naming the setting', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud', network: 'none' });
      const refused = await viaSocket(socket, 'http://allowed.test/');
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('config.network "none"');
    });

    it.each([
      ['127.0.0.1:4222', 'loopback'],
      ['127.1:8080', 'loopback'],
      ['0x7f000001:22', 'loopback'],
      ['[::1]:80', 'loopback'],
      ['[::ffff:127.0.0.1]:80', 'loopback'],
      ['169.254.169.254:80', 'linkLocal'],
      ['10.0.0.5:27017', 'private'],
      ['172.17.0.1:2375', 'private'],
      ['localhost:8080', 'a name of this machine'],
      ['metadata.google.internal:80', 'a name of this machine'],
    ])('never reaches the platform or private networks: CONNECT %s (%s), even unrestricted', async (authority, range) => {
      const { socket } = await egress.sandbox({ type: 'cloud' });
      const seen = upstream.requests.length;
      const tunnel = await connectVia(socket, authority);
      expect(tunnel.status).toBe(403);
      expect(tunnel.headers['x-berth-egress-denied']).toBe('platform_address');
      expect(tunnel.body).toContain(range);
      expect(upstream.requests.length).toBe(seen);
    });

    it('never reaches a loopback service through plain HTTP either', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud' });
      const answer = await viaSocket(socket, 'http://127.0.0.1:4222/');
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('sandboxes never reach this machine');
    });
  });

  describe('identity', () => {
    it('gives a sandbox that is no session\'s nothing, not even the model', async () => {
      const socket = await egress.unclaimed('berth-p-env_x-abc123');
      const answer = await viaSocket(socket, '/v1/messages', { method: 'POST', body: messages });
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('not bound to a session');
      expect((await connectVia(socket, 'allowed.test:443')).status).toBe(403);
    });

    it("gives an older generation's sandbox nothing once the session has moved on", async () => {
      const socket = await egress.unclaimed('berth-s-sesn_nobody-g3');
      expect((await viaSocket(socket, '/v1/messages', { method: 'POST', body: messages })).status).toBe(403);
    });
  });

  describe('restarts', () => {
    it('serves the same sandbox directory again after the egress restarts', async () => {
      const { socket } = await egress.sandbox({ type: 'cloud' });
      expect((await viaSocket(socket, 'http://allowed.test/')).status).toBe(200);
      await egress.egress.stop();
      await expect(viaSocket(socket, 'http://allowed.test/')).rejects.toThrow();
      await egress.startEgress();
      expect((await viaSocket(socket, 'http://allowed.test/')).status).toBe(200);
    });
  });
});

describe('the egress without an upstream proxy', () => {
  let egress: EgressHarness;
  const dns: Record<string, string[]> = { 'rebind.test': ['93.184.216.34', '127.0.0.1'], 'inside.test': ['10.1.2.3'], 'v6inside.test': ['fd00::7'] };

  beforeAll(async () => {
    egress = await new EgressHarness({
      model: { baseUrl: null, trustedHosts: [] },
      keys: {},
      resolve: async (host) => {
        const answer = dns[host];
        if (answer === undefined) throw new Error(`no test DNS answer for ${host}`);
        return answer;
      },
    }).start();
  });
  afterAll(() => egress?.stop());

  it.each(Object.entries(dns))('checks what %s resolves to, not just its name', async (host, addresses) => {
    const { socket } = await egress.sandbox({ type: 'cloud' });
    const tunnel = await connectVia(socket, `${host}:443`);
    expect(tunnel.status).toBe(403);
    expect(tunnel.body).toContain(`it resolves to ${addresses.find((a) => !a.startsWith('93.'))}`);
  });

  it('says so when no model endpoint is configured', async () => {
    const { socket, environmentId } = await egress.sandbox({ type: 'cloud' });
    const answer = await viaSocket(socket, '/v1/messages', { method: 'POST', body: messages });
    expect(answer.status).toBe(503);
    expect(answer.headers['x-should-retry']).toBe('false');
    expect(JSON.parse(answer.body).error.message).toContain(`no model endpoint is configured for environment ${environmentId}`);
  });

  it('answers a name it cannot resolve with 502, not a hang', async () => {
    const { socket } = await egress.sandbox({ type: 'cloud' });
    const tunnel = await connectVia(socket, 'unknown.test:443');
    expect(tunnel.status).toBe(502);
    expect(tunnel.body).toContain('could not resolve unknown.test');
  });
});

