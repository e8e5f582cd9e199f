import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli';
import { ExitCode } from './exit-codes';
import { JournalServer, type StreamEvent } from './test-support/journal-server';

// `berth` end to end against a loopback HTTP server playing the API: what it prints and the
// exit code a script would branch on.

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const apiError = (res: ServerResponse, status: number, type: string, code: string, message: string) => json(res, status, { type: 'error', error: { type, message, code } });

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) } };
}

let server: JournalServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const agent = {
  id: 'agent_1',
  type: 'agent',
  name: 'coder',
  model: { id: 'claude-sonnet-4-5' },
  version: 1,
  system: null,
  description: null,
  tools: [{ type: 'agent_toolset_20260401', default_config: { enabled: true, permission_policy: { type: 'always_allow' } }, configs: [] }],
  mcp_servers: [],
  skills: [],
  multiagent: null,
  execution_identity: { type: 'service_account' },
  metadata: {},
  created_at: 't',
  updated_at: 't',
  archived_at: null,
};

function api(events: StreamEvent[] = [], dropAfter?: (n: number) => number | undefined) {
  const bodies: { method: string; path: string; query: string; body: unknown; headers: IncomingMessage['headers'] }[] = [];
  const srv = new JournalServer({
    events,
    dropAfter,
    route: (req, res, body) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      bodies.push({ method: req.method ?? '', path, query: new URL(req.url ?? '/', 'http://x').search, body: body && req.headers['content-type'] !== 'application/x-tar' ? JSON.parse(body) : body || null, headers: req.headers });
      if (req.headers['x-api-key'] !== 'good') return apiError(res, 401, 'authentication_error', 'UNAUTHENTICATED', 'invalid API key'), true;
      if (req.method === 'GET' && path === '/v1/agents') return json(res, 200, { data: [agent], next_page: null }), true;
      if (req.method === 'POST' && path === '/v1/agents') return json(res, 200, agent), true;
      if (req.method === 'GET' && path === '/v1/agents/agent_1') return json(res, 200, agent), true;
      if (req.method === 'GET' && path === '/v1/agents/agent_custom') return json(res, 200, { ...agent, id: 'agent_custom', tools: [...agent.tools, LOOKUP, NOTIFY] }), true;
      if (req.method === 'POST' && path === '/v1/agents/agent_custom') return json(res, 200, { ...agent, id: 'agent_custom' }), true;
      if (req.method === 'POST' && path === '/v1/agents/agent_1') return json(res, 200, agent), true;
      if (req.method === 'POST' && path === '/v1/nats_credentials') {
        const minted = { type: 'nats_credential', id: 'ncred_1', name: 'billing', public_key: 'UABC', created_at: 't', revoked_at: null };
        return json(res, 200, { ...minted, creds: '-----BEGIN NATS USER JWT-----\nx\n', connection: { servers: 'nats://127.0.0.1:4222', inbox_prefix: '_INBOX.owner.o', stream: 'OWNER_EVT_o', subjects: 'session.*.evt.o.*' } }), true;
      }
      if (path === '/v1/agents/agent_404') return apiError(res, 404, 'not_found_error', 'AGENT_NOT_FOUND', 'agent agent_404 not found'), true;
      if (req.method === 'POST' && /^\/v1\/sessions\/sesn_1\/(pause|resume)$/.test(path)) {
        return json(res, 200, { id: 'sesn_1', type: 'session', title: null, status: 'idle', agent: { id: 'agent_1' }, environment_id: 'env_1', created_at: 't', updated_at: 't', archived_at: null, berth: { paused: path.endsWith('/pause') } }), true;
      }
      if (req.method === 'POST' && path === '/v1/sessions/sesn_1/fork') {
        const from = { session_id: 'sesn_1', turn_id: 'turn_2', event_id: 'sevt_2', seq: 7 };
        return json(res, 200, { id: 'sesn_fork', type: 'session', title: null, status: 'idle', agent: { id: 'agent_1' }, environment_id: 'env_1', created_at: 't', updated_at: 't', archived_at: null, berth: { forked_from: from } }), true;
      }
      if (path === '/v1/sessions/sesn_busy/fork') return apiError(res, 409, 'conflict_error', 'FORK_TURN_RUNNING', 'turn turn_9 has not finished yet; fork from it once it is idle'), true;
      if (req.method === 'GET' && path === '/v1/sessions/sesn_1/export') {
        res.writeHead(200, { 'content-type': 'application/x-tar' });
        return res.end(EXPORTED), true;
      }
      if (req.method === 'POST' && path === '/v1/sessions/import') {
        if (body !== IMPORTED) return apiError(res, 400, 'invalid_request_error', 'ARCHIVE_NOT_A_TAR', 'the upload is not a session archive (a tar)'), true;
        const resources_not_carried = [
          { type: 'file', id: 'sesrsc_f', file_id: 'file_brief', mount_path: '/mnt/session/uploads/file_brief' },
          { type: 'github_repository', id: 'sesrsc_r', url: 'https://github.com/acme/app.git', checkout: null, mount_path: '/workspace/app' },
        ];
        const from = { session_id: 'sesn_src', agent: { id: 'agent_src', version: 1 }, environment_id: 'env_src', exported_at: 't', resources_not_carried };
        return json(res, 200, { id: 'sesn_imported', type: 'session', title: null, status: 'idle', agent: { id: 'agent_1' }, environment_id: 'env_1', created_at: 't', updated_at: 't', archived_at: null, berth: { imported_from: from } }), true;
      }
      if (path === '/v1/sessions/sesn_busy/pause') return apiError(res, 409, 'invalid_request_error', 'SESSION_BUSY', 'a turn is active; let it finish (or interrupt it) before pausing'), true;
      if (path === '/v1/sessions/sesn_bad/recover') return apiError(res, 409, 'invalid_request_error', 'ILLEGAL_STATE', 'session is deleted'), true;
      if (req.method === 'POST' && path === '/v1/sessions/sesn_1/events') {
        return json(res, 200, { data: [{ id: 'sevt_msg', type: 'user.message', processed_at: null, content: [{ type: 'text', text: 'hi' }] }] }), true;
      }
      return false;
    },
  });
  return { srv, bodies };
}

const LOOKUP = { type: 'custom', name: 'lookup_order', description: 'Find an order by its id\nReturns the order as JSON.', input_schema: { type: 'object', properties: { order_id: { type: 'string' }, note: { type: 'string' } }, required: ['order_id'] } };
const NOTIFY = { type: 'custom', name: 'notify', description: '', input_schema: { type: 'object' } };

/** What the loopback API streams as an export (any bytes: the CLI saves them as they come). */
const EXPORTED = Buffer.from('a tar archive, byte for byte \u0000\u00ff');
/** What the CLI uploads as an import in these tests (text, so the loopback API compares it as it arrived). */
const IMPORTED = 'an archive to import\n';
const env = (url: string, key = 'good') => ({ BERTH_API_URL: url, BERTH_API_KEY: key });

describe('berth against a loopback API', () => {
  it('mints a NATS credential into a 0600 file and prints how to connect, not the secret', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const dir = mkdtempSync(join(tmpdir(), 'berth-cli-'));
    const out = capture();
    expect(await runCli(['nats-credentials', 'create', '--name', 'billing', '--out', join(dir, 'billing.creds')], { env: env(server.url), io: out.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)).toMatchObject({ method: 'POST', path: '/v1/nats_credentials', body: { name: 'billing' } });
    expect(readFileSync(join(dir, 'billing.creds'), 'utf8')).toContain('BEGIN NATS USER JWT');
    expect(statSync(join(dir, 'billing.creds')).mode & 0o777).toBe(0o600);
    expect(out.out.join('\n')).toMatch(/stream:\s+OWNER_EVT_o/);
    expect(out.out.join('\n')).not.toContain('BEGIN NATS USER JWT');
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists agents as a table, or as JSON with --json', async () => {
    const { srv } = api();
    server = await srv.start();
    const human = capture();
    expect(await runCli(['agents', 'list'], { env: env(server.url), io: human.io })).toBe(ExitCode.ok);
    expect(human.out.join('\n')).toMatch(/^ID\s+NAME\s+MODEL\s+VERSION\s+ARCHIVED\nagent_1\s+coder\s+claude-sonnet-4-5\s+v1$/);
    const machine = capture();
    expect(await runCli(['agents', 'list', '--json'], { env: env(server.url), io: machine.io })).toBe(ExitCode.ok);
    expect(JSON.parse(machine.out.join('\n')).data[0].id).toBe('agent_1');
  });

  it('sends what the options say', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const c = capture();
    expect(await runCli(['agents', 'create', '--name', 'coder', '--model', 'claude-sonnet-4-5', '--system', 'be brief'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)).toMatchObject({ method: 'POST', path: '/v1/agents', body: { name: 'coder', model: 'claude-sonnet-4-5', system: 'be brief' } });
    expect(bodies.at(-1)?.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('creates an agent with the built-in toolset, per-tool switches and permissions, and MCP servers', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const argv = ['agents', 'create', '--name', 'coder', '--model', 'claude-opus-4-7', '--effort', 'high', '--tool', 'bash:ask', '--tool', 'web_fetch:off', '--mcp', 'docs=https://mcp.example/mcp', '--mcp-tool', 'docs.shout:off'];
    const c = capture();
    expect(await runCli(argv, { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toEqual({
      name: 'coder',
      model: { id: 'claude-opus-4-7', effort: 'high' },
      tools: [
        { type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }, { name: 'web_fetch', enabled: false }] },
        { type: 'mcp_toolset', mcp_server_name: 'docs', configs: [{ name: 'shout', enabled: false }] },
      ],
      mcp_servers: [{ type: 'url', name: 'docs', url: 'https://mcp.example/mcp' }],
    });
    expect(c.out.join('\n')).toMatch(/tools:\s+bash, edit, read/);
  });

  it('updates the tools of the current version: switches apply on top of what the agent has', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const c = capture();
    expect(await runCli(['agents', 'update', 'agent_1', '--tool', 'read:off', '--permission', 'ask'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toMatchObject({
      version: 1,
      tools: [{ type: 'agent_toolset_20260401', default_config: { enabled: true, permission_policy: { type: 'always_ask' } }, configs: [{ name: 'read', enabled: false }] }],
    });
    expect(await runCli(['agents', 'update', 'agent_1', '--system', 'only this'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toEqual({ version: 1, system: 'only this' });
  });

  it('declares custom tools from JSON files (one object, or an array), and agents get lists them', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const dir = mkdtempSync(join(tmpdir(), 'berth-cli-'));
    const { type: _type, ...withoutType } = LOOKUP;
    writeFileSync(join(dir, 'lookup.json'), JSON.stringify(withoutType));
    writeFileSync(join(dir, 'more.json'), JSON.stringify([NOTIFY]));
    const c = capture();
    expect(await runCli(['agents', 'create', '--name', 'support', '--model', 'm', '--custom-tool', join(dir, 'lookup.json'), '--custom-tool', join(dir, 'more.json')], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toMatchObject({ tools: [{ type: 'agent_toolset_20260401' }, LOOKUP, NOTIFY] });

    const got = capture();
    expect(await runCli(['agents', 'get', 'agent_custom'], { env: env(server.url), io: got.io })).toBe(ExitCode.ok);
    expect(got.out.join('\n')).toMatch(/custom tools:\s+lookup_order\(order_id, note\?\)  Find an order by its id\n\s+notify\(\)\n/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an update replaces a custom tool of the same name, removes one, and keeps the others and the built-in tools', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const dir = mkdtempSync(join(tmpdir(), 'berth-cli-'));
    const changed = { ...LOOKUP, description: 'Find an order' };
    writeFileSync(join(dir, 'lookup.json'), JSON.stringify(changed));
    const c = capture();
    expect(await runCli(['agents', 'update', 'agent_custom', '--custom-tool', join(dir, 'lookup.json')], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toEqual({ version: 1, tools: [agent.tools[0], changed, NOTIFY], mcp_servers: [] });
    expect(await runCli(['agents', 'update', 'agent_custom', '--remove-custom-tool', 'lookup_order'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toEqual({ version: 1, tools: [agent.tools[0], NOTIFY], mcp_servers: [] });
    expect(await runCli(['agents', 'update', 'agent_custom', '--system', 'be brief'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.body).toEqual({ version: 1, system: 'be brief' });
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['{"name": "x",', /--custom-tool .*bad\.json: not valid JSON \(/],
    ['[1]', /--custom-tool .*bad\.json\[0\]: must be a JSON object/],
    ['{"description": "no name"}', /--custom-tool .*bad\.json: needs a "name"/],
    ['{"type": "mcp_toolset", "name": "x"}', /--custom-tool .*bad\.json: "type" must be "custom"/],
  ])('a --custom-tool file holding %s is a usage error that says why', async (content, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-cli-'));
    writeFileSync(join(dir, 'bad.json'), content);
    const c = capture();
    expect(await runCli(['agents', 'create', '--name', 'a', '--model', 'm', '--custom-tool', join(dir, 'bad.json')], { env: env('http://127.0.0.1:9'), io: c.io })).toBe(ExitCode.usage);
    expect(c.err[0]).toMatch(message);
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [['agents', 'create', '--name', 'a', '--model', 'm', '--tool', 'shell:off'], '--tool: no built-in tool "shell"'],
    [['agents', 'create', '--name', 'a', '--model', 'm', '--tool', 'bash'], '--tool must look like NAME:off|on|ask|allow'],
    [['agents', 'create', '--name', 'a', '--model', 'm', '--mcp-tool', 'docs.x:off'], 'names no tool of an MCP server'],
    [['agents', 'create', '--name', 'a', '--model', 'm', '--custom-tool', '/nonexistent/tool.json'], '--custom-tool /nonexistent/tool.json: cannot read it (ENOENT)'],
    [['agents', 'update', 'agent_1', '--remove-custom-tool', 'nope'], '--remove-custom-tool: the agent has no custom tool "nope"'],
    [['envs', 'create', '--name', 'e', '--cpus', 'two'], '--cpus must be a number'],
  ])('%j is a usage error that says why', async (argv, message) => {
    const { srv } = api();
    server = await srv.start();
    const c = capture();
    expect(await runCli(argv, { env: env(server.url), io: c.io })).toBe(ExitCode.usage);
    expect(c.err[0]).toContain(message);
  });

  it('sessions tool-result answers a custom tool call with a text result (--error marks it failed)', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const c = capture();
    expect(await runCli(['sessions', 'tool-result', 'sesn_1', 'sevt_call_0', 'sunny, 21°C'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v1/sessions/sesn_1/events',
      body: { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_call_0', content: [{ type: 'text', text: 'sunny, 21°C' }], is_error: false }] },
    });
    expect(c.out).toEqual(['answered sevt_call_0']);
    expect(await runCli(['sessions', 'tool-result', 'sesn_1', 'sevt_call_1', 'no such city', '--error'], { env: env(server.url), io: capture().io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)).toMatchObject({ body: { events: [{ custom_tool_use_id: 'sevt_call_1', is_error: true }] } });
  });

  it('sessions export saves the archive the API streams, under the name given or <session>.berth.tar', async () => {
    const { srv } = api();
    server = await srv.start();
    const dir = mkdtempSync(join(tmpdir(), 'berth-export-'));
    const c = capture();
    expect(await runCli(['sessions', 'export', 'sesn_1', join(dir, 'copy.tar'), '--json'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
    expect(readFileSync(join(dir, 'copy.tar'))).toEqual(EXPORTED);
    expect(JSON.parse(c.out.join('\n'))).toEqual({ session_id: 'sesn_1', path: join(dir, 'copy.tar'), bytes: EXPORTED.length });
    expect(existsSync(join(dir, 'copy.tar.partial'))).toBe(false);
  });

  it('sessions import uploads the archive file as is (with --agent and --env as the route’s query) and prints the new session, its origin and the resources not carried over', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    const dir = mkdtempSync(join(tmpdir(), 'berth-import-'));
    writeFileSync(join(dir, 'in.berth.tar'), IMPORTED);
    const human = capture();
    expect(await runCli(['sessions', 'import', join(dir, 'in.berth.tar')], { env: env(server.url), io: human.io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)).toMatchObject({ method: 'POST', path: '/v1/sessions/import', body: IMPORTED, headers: { 'content-type': 'application/x-tar' } });
    expect(human.out.join('\n')).toMatch(/^id:\s+sesn_imported$/m);
    expect(human.out.join('\n')).toMatch(/^imported from:\s+sesn_src$/m);
    expect(human.out.join('\n')).toMatch(/^not carried over:\s+file file_brief at \/mnt\/session\/uploads\/file_brief, github_repository https:\/\/github\.com\/acme\/app\.git at \/workspace\/app \(attach again/m);
    const machine = capture();
    expect(await runCli(['sessions', 'import', join(dir, 'in.berth.tar'), '--agent', 'agent_9', '--env', 'env_9', '--json'], { env: env(server.url), io: machine.io })).toBe(ExitCode.ok);
    expect(JSON.parse(machine.out.join('\n')).berth.imported_from.session_id).toBe('sesn_src');
    expect(bodies.at(-1)?.query).toBe('?agent_id=agent_9&environment_id=env_9');
    expect(await runCli(['sessions', 'import', join(dir, 'in.berth.tar'), '--idempotency-key', 'import-once'], { env: env(server.url), io: capture().io })).toBe(ExitCode.ok);
    expect(bodies.at(-1)?.headers).toMatchObject({ 'idempotency-key': 'import-once' });
    // The API's refusal is printed with its code; a file that is not there is a usage error, nothing sent.
    writeFileSync(join(dir, 'bad.tar'), 'not an archive');
    const refused = capture();
    expect(await runCli(['sessions', 'import', join(dir, 'bad.tar')], { env: env(server.url), io: refused.io })).not.toBe(ExitCode.ok);
    expect(refused.err.join('\n')).toContain('ARCHIVE_NOT_A_TAR');
    const sent = bodies.length;
    expect(await runCli(['sessions', 'import', join(dir, 'missing.tar')], { env: env(server.url), io: capture().io })).toBe(ExitCode.usage);
    expect(bodies).toHaveLength(sent);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sessions pause and resume post to their routes and print the session', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    for (const verb of ['pause', 'resume']) {
      const c = capture();
      expect(await runCli(['sessions', verb, 'sesn_1', '--json'], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
      expect(bodies.at(-1)).toMatchObject({ method: 'POST', path: `/v1/sessions/sesn_1/${verb}` });
      expect(JSON.parse(c.out.join('\n')).berth.paused).toBe(verb === 'pause');
    }
  });

  it('sessions fork posts the turn it names (--event-id, --seq, or none) and prints the new session and its origin', async () => {
    const { srv, bodies } = api();
    server = await srv.start();
    for (const [flags, body] of [[['--event-id', 'sevt_2'], { event_id: 'sevt_2' }], [['--seq', '7'], { seq: 7 }], [[], {}]] as const) {
      const c = capture();
      expect(await runCli(['sessions', 'fork', 'sesn_1', ...flags], { env: env(server.url), io: c.io })).toBe(ExitCode.ok);
      expect(bodies.at(-1)).toMatchObject({ method: 'POST', path: '/v1/sessions/sesn_1/fork', body });
      expect(c.out.join('\n')).toMatch(/sesn_fork[\s\S]*forked from: sesn_1 at turn_2/);
    }
    const both = capture();
    expect(await runCli(['sessions', 'fork', 'sesn_1', '--event-id', 'sevt_2', '--seq', '7'], { env: env(server.url), io: both.io })).toBe(ExitCode.usage);
    expect(both.err[0]).toContain('not both');
  });

  it.each([
    [['sessions', 'fork', 'sesn_busy'], 'good', ExitCode.apiError, 'error: turn turn_9 has not finished yet; fork from it once it is idle (code FORK_TURN_RUNNING, HTTP 409)'],
    [['sessions', 'pause', 'sesn_busy'], 'good', ExitCode.apiError, 'error: a turn is active; let it finish (or interrupt it) before pausing (code SESSION_BUSY, HTTP 409)'],
    [['agents', 'get', 'agent_404'], 'good', ExitCode.notFound, 'error: agent agent_404 not found (code AGENT_NOT_FOUND, HTTP 404)'],
    [['agents', 'list'], 'bad', ExitCode.auth, 'error: invalid API key (code UNAUTHENTICATED, HTTP 401)'],
    [['sessions', 'recover', 'sesn_bad'], 'good', ExitCode.apiError, 'error: session is deleted (code ILLEGAL_STATE, HTTP 409)'],
    [['agents', 'get'], 'good', ExitCode.usage, 'error: missing <agent>'],
  ])('%j exits with a code that says what went wrong', async (argv, key, code, message) => {
    const { srv } = api();
    server = await srv.start();
    const c = capture();
    expect(await runCli(argv, { env: env(server.url, key), io: c.io })).toBe(code);
    expect(c.err[0].split('\n')[0]).toBe(message);
  });

  it('exits 5 when the API cannot be reached', async () => {
    const { srv } = api();
    const down = await srv.start();
    const url = down.url;
    await down.stop();
    const c = capture();
    expect(await runCli(['agents', 'list'], { env: env(url), io: c.io })).toBe(ExitCode.connection);
    expect(c.err[0]).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });

  it('send --wait follows its turn through a dropped connection and prints the answer', async () => {
    const e = (seq: number, id: string, type: string, fields: Record<string, unknown> = {}): StreamEvent => ({ seq, event: { id, type, processed_at: 't', ...fields } });
    const history = [
      e(1, 'sevt_old', 'user.message', { content: [{ type: 'text', text: 'earlier' }] }),
      e(2, 'sevt_r0', 'session.status_running'),
      e(3, 'sevt_old_answer', 'agent.message', { content: [{ type: 'text', text: 'old answer' }] }),
      e(4, 'sevt_i0', 'session.status_idle', { stop_reason: { type: 'end_turn' } }),
      e(5, 'sevt_msg', 'user.message', { content: [{ type: 'text', text: 'hi' }] }),
      e(6, 'sevt_r1', 'session.status_running'),
      e(7, 'sevt_tool', 'agent.tool_use', { name: 'bash', input: { command: 'ls' }, evaluated_permission: 'allow' }),
      e(8, 'sevt_res', 'agent.tool_result', { tool_use_id: 'sevt_tool', content: [{ type: 'text', text: 'a.txt' }], is_error: false }),
      e(9, 'sevt_answer', 'agent.message', { content: [{ type: 'text', text: 'One file: a.txt' }] }),
      e(10, 'sevt_i1', 'session.status_idle', { stop_reason: { type: 'end_turn' } }),
    ];
    const { srv } = api(history, (n) => (n === 0 ? 7 : undefined));
    server = await srv.start();
    const c = capture();
    expect(await runCli(['send', 'sesn_1', 'hi', '--wait'], { env: env(server.url), io: c.io, streamBackoffMs: 5 })).toBe(ExitCode.ok);
    expect(c.out).toEqual(['One file: a.txt']);
    expect(c.err.some((l) => l.startsWith('connection lost') && l.includes('resuming after #7'))).toBe(true);
    expect(c.err.filter((l) => l.includes('agent.tool_result'))).toHaveLength(1);
    expect(server.requests.map((r) => r.lastEventId)).toEqual([null, '7']);
  });
});
