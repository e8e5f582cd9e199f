import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:http';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
// The gateway's own test composition (in-memory SQLite, in-process kernel); no lib exports a platform harness yet.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startGateway, type GatewayHarness } from '../../../gateway/test/support/gateway-harness';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { call } from '../../../gateway/test/support/api';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { waitFor } from '../../../gateway/test/support/wait-for';
import { buildConsole, gatewayServesConsole, startConsoleHost } from './support/console-host';
import { SCRIPT, ScriptedTurnRunner } from './support/scripted-turn-runner';
import { OUTPUT, ScriptedWorkspace, WORKSPACE } from './support/scripted-workspace';

/**
 * The console in headless Chromium against a running gateway (in-memory SQLite, in-process
 * kernel) whose turns a scripted runner answers with a tool use and a message: sign in, create
 * an agent and an environment, start a session, watch a turn, reload, approve a tool use,
 * recover and terminate, fork from a turn, export and import, list and filter.
 */
jest.setTimeout(90_000);

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = resolve(__dirname, '..', '..', '..', '..', 'artifacts', 'screenshots');

let gw: GatewayHarness;
let runner: ScriptedTurnRunner;
let host: { url: string; close(): Promise<void> } | null = null;
let consoleUrl: string;
let context: BrowserContext;
let page: Page;
let profile: string;

beforeAll(async () => {
  buildConsole();
  let workspace: ScriptedWorkspace | null = null;
  gw = await startGateway({ turnRunner: false, workspace: (store) => (workspace = new ScriptedWorkspace(store)) });
  runner = new ScriptedTurnRunner(gw.bus, gw.feed, (sessionId) => workspace?.capture(sessionId) ?? Promise.resolve());
  if (await gatewayServesConsole(gw.url)) {
    consoleUrl = `${gw.url}/console/`;
  } else {
    // The gateway does not serve /console/ (yet): same-origin host for the built files.
    host = await startConsoleHost(gw.url);
    consoleUrl = `${host.url}/console/`;
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'berth-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = context.pages()[0] ?? (await context.newPage());
});

afterAll(async () => {
  await context?.close();
  runner?.close();
  await host?.close();
  await gw?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
const byTest = (id: string) => page.getByTestId(id);
const waitForText = (id: string, text: string) => byTest(id).filter({ hasText: text }).first().waitFor({ timeout: 15_000 });

describe('Berth console in Chromium', () => {
  it('refuses a wrong key with a readable error', async () => {
    await page.goto(consoleUrl);
    await byTest('signin-key').fill('bk_wrong');
    await byTest('signin-submit').click();
    await byTest('error').waitFor();
    expect(await byTest('error').innerText()).toMatch(/key|auth/i);
    await shot('01-signin-error');
  });

  it('signs in and creates an agent and an environment', async () => {
    await byTest('signin-key').fill(gw.keyA);
    await byTest('signin-submit').click();
    await byTest('nav-agents').click();
    await byTest('empty').waitFor();
    await byTest('agent-new').click();
    await byTest('agent-name').fill('coder');
    await byTest('agent-system').fill('Answer briefly.');
    await byTest('tool-permission-bash').selectOption('ask');
    await byTest('tool-enabled-web_fetch').uncheck();
    await byTest('mcp-add').click();
    await byTest('mcp-name').fill('docs');
    await byTest('mcp-url').fill('https://mcp.example/mcp');
    await byTest('agent-save').click();
    await waitForText('agent-row', 'coder');
    expect(await byTest('agent-tools').first().innerText()).toBe('7 tools, bash asks · MCP: docs');
    const [stored] = (await (await fetch(`${gw.url}/v1/agents`, { headers: { 'x-api-key': gw.keyA } })).json()).data;
    expect(stored.tools[0].configs).toEqual(expect.arrayContaining([
      { name: 'bash', type: 'bash', enabled: true, permission_policy: { type: 'always_ask' } },
      { name: 'web_fetch', type: 'web_fetch', enabled: false, permission_policy: { type: 'always_allow' } },
    ]));
    expect(stored.mcp_servers).toEqual([{ type: 'url', name: 'docs', url: 'https://mcp.example/mcp' }]);
    await shot('02-agents');

    await byTest('nav-environments').click();
    await byTest('env-new').click();
    await byTest('env-name').fill('local sandbox');
    await byTest('env-harness').selectOption('claude-code');
    await byTest('env-idle-timeout').fill('600');
    await byTest('env-warm-pool').fill('1');
    await byTest('env-apt').fill('jq ripgrep');
    await byTest('env-save').click();
    await waitForText('env-row', 'local sandbox');
    expect(await byTest('env-row').first().innerText()).toContain('claude-code');
    expect(await byTest('env-packages').first().innerText()).toBe('apt:jq apt:ripgrep');
    expect(await byTest('env-row').first().innerText()).toContain('600 s · 1 warm');
    await shot('03-environments');
  });

  it('starts a session and shows the tool use folded with its result, then the answer', async () => {
    await byTest('nav-sessions').click();
    await byTest('session-new').click();
    await byTest('session-title').fill('list files');
    await byTest('session-create').click();
    await page.waitForURL(/#\/sessions\/sesn_/);
    await waitForText('stream-state', 'live');

    await byTest('composer-input').fill('List the files here');
    await byTest('composer-send').click();
    await waitForText('block-user_message', 'List the files here');
    await page.locator('[data-testid="tool-block"][data-tool-state="done"]').waitFor({ timeout: 15_000 });
    await waitForText('block-agent_message', SCRIPT.answer);

    const tool = byTest('tool-block').first();
    expect(await tool.getByTestId('tool-name').innerText()).toBe('bash');
    expect(await tool.getByTestId('tool-input').innerText()).toBe('command: ls');
    expect(await tool.getByTestId('tool-result').innerText()).toBe(SCRIPT.output);
    expect(await byTest('tool-block').count()).toBe(1);
    expect(await byTest('status-badge').innerText()).toBe('idle');
    await shot('04-session-turn');
  });

  it('shows the same history after a reload', async () => {
    const before = await byTest('timeline').innerText();
    await page.reload();
    await waitForText('block-agent_message', SCRIPT.answer);
    await page.waitForFunction((expected) => document.querySelector('[data-testid="timeline"]')?.textContent?.length === expected, (await byTest('timeline').textContent())?.length ?? 0);
    expect(await byTest('timeline').innerText()).toBe(before);
    expect(await byTest('block-user_message').count()).toBe(1);
    expect(await byTest('tool-block').count()).toBe(1);
    await shot('05-after-reload');
  });

  it('waits for approval of a tool use, and goes on once approved', async () => {
    await byTest('composer-input').fill('Clean the build directory (ask)');
    await byTest('composer-send').click();
    const pending = page.locator('[data-testid="tool-block"][data-tool-state="needs approval"]');
    await pending.waitFor({ timeout: 15_000 });
    await waitForText('status-badge', 'waiting');
    await shot('06-needs-approval');

    await pending.getByTestId('tool-allow').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="tool-block"][data-tool-state="done"]').length === 2, undefined, { timeout: 15_000 });
    await page.waitForFunction((answer) => [...document.querySelectorAll('[data-testid="block-agent_message"]')].filter((b) => b.textContent?.includes(answer)).length === 2, SCRIPT.answer);
    expect(await byTest('tool-confirm').count()).toBe(0);
    expect(await byTest('tool-block').nth(1).innerText()).toContain('approved');
    await shot('07-approved');
  });

  it('pauses the session (the Resume button replaces Pause) and resumes it from its page', async () => {
    await byTest('session-pause').click();
    await byTest('session-resume').waitFor({ timeout: 15_000 });
    expect(await byTest('session-pause').count()).toBe(0);
    await shot('08a-paused');
    await byTest('session-resume').click();
    await byTest('session-pause').waitFor({ timeout: 15_000 });
    expect(await byTest('session-resume').count()).toBe(0);
  });

  it('recovers and terminates the session from its page', async () => {
    await byTest('session-recover').click();
    await waitForText('block-notice', 'Session recovered');
    page.once('dialog', (dialog) => void dialog.accept());
    await byTest('session-terminate').click();
    await waitForText('status-badge', 'terminated');
    await waitForText('block-status', 'Terminated');
    expect(await byTest('session-terminate').isDisabled()).toBe(true);
    await shot('08-terminated');
  });

  it('uploads files when starting a session, then shows its outputs with downloads and a read-only workspace browser', async () => {
    const upload = join(profile, 'brief.txt');
    writeFileSync(upload, 'what the agent should read\n');
    await byTest('nav-sessions').click();
    await byTest('session-new').click();
    await byTest('session-title').fill('with files');
    await byTest('session-files').setInputFiles(upload);
    await byTest('session-repo').fill('https://github.com/acme/widgets.git');
    await byTest('session-repo-ref').fill('main');
    await byTest('session-create').click();
    await page.waitForURL(/#\/sessions\/sesn_/);
    await waitForText('stream-state', 'live');
    await byTest('tab-resources').click();
    await waitForText('resources', '/workspace/widgets');
    expect(await byTest('resources').innerText()).toMatch(/\/mnt\/session\/uploads\/file_\w+\s+file file_/);
    expect(await byTest('resources').innerText()).toContain('https://github.com/acme/widgets.git @ main');
    const uploaded = (await gw.store.files.list('owner_a', { limit: 100 })).data.find((f) => f.filename === 'brief.txt');
    expect(uploaded).toMatchObject({ size_bytes: 27, scope: null });

    await byTest('tab-outputs').click();
    await byTest('empty').filter({ hasText: 'No outputs yet' }).waitFor();
    await byTest('composer-input').fill('Write the report');
    await byTest('composer-send').click();
    await waitForText('block-agent_message', SCRIPT.answer);
    await waitForText('output-row', OUTPUT.name);
    const [download] = await Promise.all([page.waitForEvent('download'), byTest('output-download').first().click()]);
    expect(download.suggestedFilename()).toBe(OUTPUT.name);
    expect(readFileSync(await download.path(), 'utf8')).toBe(OUTPUT.content);
    await shot('11-session-outputs');

    await byTest('tab-workspace').click();
    await waitForText('workspace-entry', 'src/');
    expect(await byTest('workspace-entry').allInnerTexts()).toEqual([expect.stringMatching(/^README\.md/), expect.stringMatching(/^src\//)]);
    await byTest('workspace-entry').filter({ hasText: 'src/' }).click();
    await waitForText('workspace-path', 'src');
    await byTest('workspace-entry').filter({ hasText: 'main.ts' }).click();
    await waitForText('workspace-file-text', 'answer');
    expect(await byTest('workspace-file-text').innerText()).toBe(WORKSPACE['src/main.ts']);
    const [archive] = await Promise.all([page.waitForEvent('download'), byTest('workspace-download').click()]);
    expect(archive.suggestedFilename()).toMatch(/^sesn_.*-workspace\.tar$/);
    expect(readFileSync(await archive.path()).includes(Buffer.from('# hello from the workspace'))).toBe(true);
    await shot('12-session-workspace');
  });

  it('forks the session from a completed turn and opens the fork', async () => {
    const original = page.url().split('#/sessions/')[1];
    const turn = byTest('block-user_message').filter({ hasText: 'Write the report' });
    await turn.getByTestId('fork-from-turn').click();
    await page.waitForURL((url) => /#\/sessions\/sesn_/.test(url.hash) && !url.hash.includes(original));
    await waitForText('session-forked-from', original);
    await waitForText('stream-state', 'live');
    const fork = page.url().split('#/sessions/')[1];
    const messageId = (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${original}/events?limit=1000`)).json.data.find((e: { type: string }) => e.type === 'user.message').id;
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${fork}`)).json).toMatchObject({ title: 'with files', berth: { forked_from: { session_id: original, event_id: messageId } } });
    await shot('12b-session-forked');
    // Back to the original, which the export below takes.
    await page.goBack();
    await page.waitForURL((url) => url.hash.includes(original));
    await waitForText('stream-state', 'live');
  });

  it('exports the session from its page and imports the archive as a new session', async () => {
    const original = page.url().split('#/sessions/')[1];
    const [exported] = await Promise.all([page.waitForEvent('download'), byTest('session-export').click()]);
    expect(exported.suggestedFilename()).toBe(`${original}.berth.tar`);
    const archive = join(profile, exported.suggestedFilename());
    await exported.saveAs(archive);
    await byTest('nav-sessions').click();
    await byTest('session-import-file').setInputFiles(archive);
    await page.waitForURL((url) => /#\/sessions\/sesn_/.test(url.hash) && !url.hash.includes(original));
    await waitForText('session-imported-from', original);
    await waitForText('block-notice', 'Imported');
    const imported = page.url().split('#/sessions/')[1];
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${imported}`)).json).toMatchObject({ title: 'with files', berth: { imported_from: { session_id: original } } });
    await byTest('tab-outputs').click();
    await waitForText('output-row', OUTPUT.name);
    await shot('13-session-imported');
  });

  it('lists the session with its status and filters it out by status', async () => {
    await byTest('nav-sessions').click();
    await waitForText('session-row', 'list files');
    expect(await byTest('session-row').filter({ hasText: 'list files' }).getByTestId('status-badge').innerText()).toBe('terminated');
    await shot('09-sessions');
    await byTest('filter-status').selectOption('running');
    await byTest('empty').waitFor();
    await shot('10-sessions-filtered');
  });

  it('registers a webhook endpoint, shows its secret once, and shows the delivery log with a redelivery', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    await byTest('nav-webhooks').click();
    await byTest('empty').waitFor();
    await byTest('webhook-new').click();
    await byTest('webhook-url').fill(`http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`);
    await byTest('webhook-event-session.created').check();
    await byTest('webhook-save').click();
    expect(await byTest('webhook-secret-value').innerText()).toMatch(/^whsec_/);
    await shot('11-webhook-secret');
    await byTest('webhook-secret-dismiss').click();
    await waitForText('webhook-row', '/hook');
    expect(await page.content()).not.toContain('whsec_');

    await call(gw.url, gw.keyA, 'POST', '/v1/sessions', { agent: (await call(gw.url, gw.keyA, 'GET', '/v1/agents')).json.data[0].id, environment_id: (await call(gw.url, gw.keyA, 'GET', '/v1/environments')).json.data[0].id });
    await waitFor(() => received.length === 1, 15_000, 'the delivery');
    await byTest('webhook-deliveries').click();
    await waitForText('delivery-state', 'delivered');
    await byTest('delivery-redeliver').first().click();
    await waitFor(() => received.length === 2, 15_000, 'the redelivery');
    await byTest('delivery-refresh').click();
    await waitForText('delivery-state', 'redelivery');
    await shot('12-webhook-deliveries');
    await new Promise((done) => receiver.close(done));
  });

  it('stores a vault credential without ever showing its secret', async () => {
    await byTest('nav-vaults').click();
    await byTest('vault-name').fill('github');
    await byTest('vault-create').click();
    await byTest('vault-card').waitFor();
    await byTest('credential-new').click();
    await byTest('credential-where').fill('https://api.githubcopilot.com/mcp/');
    await byTest('credential-secret').fill('ghp_console-secret');
    await byTest('credential-save').click();
    await waitForText('credential-row', 'api.githubcopilot.com');
    expect(await page.content()).not.toContain('ghp_console-secret');

    // An OAuth credential Berth refreshes, whose token endpoint refuses the grant: the row says so.
    const refusing = createServer((req, res) => req.resume().on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}')));
    await new Promise<void>((done) => refusing.listen(0, '127.0.0.1', done));
    const vaultId = (await call(gw.url, gw.keyA, 'GET', '/v1/vaults')).json.data[0].id;
    const oauth = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vaultId}/credentials`, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'https://mcp.console.test/mcp',
        access_token: 'at_console-secret',
        expires_at: new Date(Date.now() + 4 * 60_000).toISOString(),
        refresh: { token_endpoint: `http://127.0.0.1:${(refusing.address() as { port: number }).port}/token`, client_id: 'console', refresh_token: 'rt_console-secret', token_endpoint_auth: { type: 'none' } },
      },
    });
    expect(oauth.status).toBe(200);
    await waitFor(async () => (await call(gw.url, gw.keyA, 'GET', `/v1/vaults/${vaultId}/credentials/${oauth.json.id}`)).json.berth.refresh.status === 'failed', 10_000, 'the refresh failed');
    await byTest('nav-sessions').click();
    await byTest('nav-vaults').click();
    await waitForText('credential-refresh', 'refresh failed (not tried again: give it a new refresh token or access token): the token endpoint answered 400 invalid_grant');
    expect(await page.content()).not.toMatch(/at_console-secret|rt_console-secret/);
    await new Promise((done) => refusing.close(done));
    await shot('13-vaults');

    await byTest('nav-sessions').click();
    await byTest('session-new').click();
    await byTest('session-title').fill('with a vault');
    await byTest('session-vault').first().check();
    await byTest('session-create').click();
    await page.waitForURL(/#\/sessions\/sesn_/);
    const sessionId = /sesn_[A-Za-z0-9_-]+/.exec(page.url())?.[0] ?? '';
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}`)).json.vault_ids).toEqual([vaultId]);
  });

  it("creates an agent with a custom tool, refuses a schema that is not JSON, and keeps the tool when another field is edited", async () => {
    const schema = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };
    await byTest('nav-agents').click();
    await byTest('agent-new').click();
    await byTest('agent-name').fill('support');
    await byTest('custom-tool-add').click();
    await byTest('custom-tool-name').fill('lookup_order');
    await byTest('custom-tool-description').fill('Find an order by its id');
    await byTest('custom-tool-schema').fill('{"type": "object", "properties": ');
    await byTest('custom-tool-schema-error').waitFor();
    expect(await byTest('custom-tool-schema-error').innerText()).toMatch(/^input_schema is not valid JSON: /);
    await byTest('agent-save').click();
    await waitForText('error', 'Custom tool lookup_order: input_schema is not valid JSON');
    await byTest('custom-tool-schema').fill(JSON.stringify(schema));
    expect(await byTest('custom-tool-schema-error').count()).toBe(0);
    await byTest('agent-save').click();
    const row = byTest('agent-row').filter({ hasText: 'support' });
    await row.waitFor();
    expect(await row.getByTestId('agent-tools').innerText()).toBe('8 tools · custom: lookup_order');
    const custom = { type: 'custom', name: 'lookup_order', description: 'Find an order by its id', input_schema: schema };
    const agentId = (await call(gw.url, gw.keyA, 'GET', '/v1/agents')).json.data.find((a: { name: string }) => a.name === 'support').id;
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/agents/${agentId}`)).json.tools.filter((t: { type: string }) => t.type === 'custom')).toEqual([custom]);

    await row.getByTestId('agent-edit').click();
    expect(await byTest('custom-tool-name').inputValue()).toBe('lookup_order');
    await byTest('agent-system').fill('Look orders up before answering.');
    await shot('14-agent-custom-tool');
    await byTest('agent-save').click();
    await row.locator('td').filter({ hasText: /^v2$/ }).waitFor();
    const stored = (await call(gw.url, gw.keyA, 'GET', `/v1/agents/${agentId}`)).json;
    expect([stored.version, stored.system]).toEqual([2, 'Look orders up before answering.']);
    expect(stored.tools.filter((t: { type: string }) => t.type === 'custom')).toEqual([custom]);
  });
});
