import type { IncomingMessage, ServerResponse } from 'node:http';
import { runCli } from '../cli';
import { ExitCode } from '../exit-codes';
import { JournalServer } from '../test-support/journal-server';

// `berth webhooks …` against a loopback server playing the API: the requests it makes and what it prints.

const endpoint = { id: 'whk_1', url: 'https://hooks.example.com/b', name: 'ci', description: '', enabled_events: ['session.created', 'session.status_idled'], state: 'enabled', disabled_reason: '', failing_since: null, next_retry_at: null, created_at: 't', updated_at: 't' };
const delivery = { id: 'whd_1', event_id: 'wevt_1', event_type: 'session.created', state: 'failed', attempt_count: 2, attempts: [{ attempted_at: 't1', status_code: 500, error: 'HTTP 500', duration_ms: 12 }, { attempted_at: 't2', status_code: null, error: 'ECONNREFUSED', duration_ms: 1 }], next_attempt_at: null, delivered_at: null, redelivery_of: null, created_at: 't' };

describe('berth webhooks', () => {
  const seen: { method: string; path: string; query: string; body: unknown }[] = [];
  let server: JournalServer;
  beforeAll(async () => {
    const json = (res: ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    server = await new JournalServer({
      events: [],
      route: (req: IncomingMessage, res, body) => {
        const url = new URL(req.url ?? '/', 'http://x');
        seen.push({ method: req.method ?? '', path: url.pathname, query: url.search, body: body ? JSON.parse(body) : null });
        if (url.pathname === '/v1/webhooks' && req.method === 'POST') return json(res, { ...endpoint, signing_secret: 'whsec_c2VjcmV0' }), true;
        if (url.pathname === '/v1/webhooks/whk_1' && req.method === 'POST') return json(res, { ...endpoint, state: 'disabled' }), true;
        if (url.pathname === '/v1/webhooks' && req.method === 'GET') {
          const failing = { ...endpoint, id: 'whk_2', failing_since: 't1', next_retry_at: 't2' };
          return json(res, { data: [{ ...failing, state: 'disabled', disabled_reason: 'consecutive_failures' }, failing], next_page: null }), true;
        }
        if (url.pathname === '/v1/webhooks/whk_2') return json(res, { ...endpoint, id: 'whk_2', failing_since: 't1', next_retry_at: 't2' }), true;
        if (url.pathname === '/v1/webhooks/whk_1/deliveries') return json(res, { data: [delivery], next_page: null }), true;
        if (url.pathname === '/v1/webhooks/whk_1/deliveries/whd_1/redeliver') return json(res, { ...delivery, id: 'whd_2', state: 'pending', attempt_count: 0, attempts: [], redelivery_of: 'whd_1' }), true;
        return false;
      },
    }).start();
  });
  afterAll(() => server.stop());

  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { env: { BERTH_API_URL: server.url, BERTH_API_KEY: 'good' }, io: { out: (t) => out.push(t), err: (t) => err.push(t) } });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('creates an endpoint from repeated or comma-separated --event and prints the secret once', async () => {
    const res = await run('webhooks', 'create', '--url', 'https://hooks.example.com/b', '--event', 'session.created,session.status_idled', '--name', 'ci');
    expect(res.code).toBe(ExitCode.ok);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', path: '/v1/webhooks', body: { url: 'https://hooks.example.com/b', enabled_events: ['session.created', 'session.status_idled'], name: 'ci' } });
    expect(res.out).toMatch(/signing secret:\s+whsec_c2VjcmV0 {2}\(shown once: store it now\)/);
  });

  it('refuses a create without an event type as a usage error, before any request', async () => {
    const before = seen.length;
    const res = await run('webhooks', 'create', '--url', 'https://hooks.example.com/b');
    expect([res.code, res.err]).toEqual([ExitCode.usage, 'error: --event is required (at least one event type)']);
    expect(seen).toHaveLength(before);
  });

  it('sends only the fields given on update', async () => {
    await run('webhooks', 'update', 'whk_1', '--disable');
    expect(seen.at(-1)).toMatchObject({ method: 'POST', path: '/v1/webhooks/whk_1', body: { state: 'disabled' } });
    expect(seen.at(-1)?.body).toEqual({ state: 'disabled' });
  });

  it('shows since when an endpoint fails, its next retry, and why Berth disabled one', async () => {
    const list = await run('webhooks', 'list');
    expect(list.out).toMatch(/disabled \(consecutive_failures\) failing since t1/);
    expect(list.out).toMatch(/whk_2\s+\S+\s+enabled failing since t1/);
    const got = await run('webhooks', 'get', 'whk_2');
    expect(got.out).toMatch(/state:\s+enabled failing since t1/);
    expect(got.out).toMatch(/next retry:\s+t2/);
  });

  it('shows the delivery log with each delivery’s last answer, filtered by state, and redelivers', async () => {
    const log = await run('webhooks', 'deliveries', 'whk_1', '--state', 'failed');
    expect(seen.at(-1)).toMatchObject({ path: '/v1/webhooks/whk_1/deliveries', query: '?state=failed' });
    expect(log.out).toMatch(/^ID\s+EVENT\s+STATE\s+ATTEMPTS\s+LAST STATUS\s+CREATED\nwhd_1\s+session\.created\s+failed\s+2\s+ECONNREFUSED\s+t$/);
    const again = await run('webhooks', 'redeliver', 'whk_1', 'whd_1');
    expect(again.out).toMatch(/redelivery of:\s+whd_1/);
    expect(again.out).toContain('(no attempt yet)');
  });
});
