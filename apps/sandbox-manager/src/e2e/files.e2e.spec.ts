import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, GitHttpServer, reply, type TestRepository } from '@berth/testing';
import { extract } from 'tar-stream';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * Work in and out, end to end: the official SDK uploads a file and creates a session with it and a
 * private repository as resources; a real Claude Code turn (scripted model) reads the file at its
 * mount path, finds the repository checked out at the requested commit, writes outputs and a file
 * in /workspace; the outputs are Files API files of the session, another owner sees none of it; the
 * workspace survives `docker kill` and a rebuilding turn, downloads as a tar equal to the sandbox's
 * /workspace, and is removed with the session.
 */

const TURN_TIMEOUT_MS = 120_000;
const TOKEN = `ghp_${randomBytes(12).toString('hex')}`;
/**
 * The test's git server listens on loopback, which the egress refuses from a sandbox (and so from
 * its clones); it gets a public-looking name that the egress's upstream proxy (the test's
 * "internet", a test-only operator setting: BERTH_EGRESS_UPSTREAM_PROXY) serves from it.
 */
const GIT_HOST = 'git.widgets.test';

const idleCount = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').length;

async function tarFiles(body: AsyncIterable<Uint8Array>): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const entries = extract();
  Readable.from(body).pipe(entries);
  for await (const entry of entries) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    if (entry.header.type === 'file') files.set(entry.header.name.replace(/^workspace\//, ''), createHash('sha256').update(Buffer.concat(chunks)).digest('hex'));
  }
  return files;
}

describe('files, resources, outputs and the workspace through the platform', () => {
  let model: AnthropicMessagesServer;
  let git: GitHttpServer;
  let repo: TestRepository;
  let platform: E2ePlatform;
  let client: Anthropic;
  let other: Anthropic;
  const workspaceDir = mkdtempSync(join(tmpdir(), 'berth-e2e-ws-'));

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    git = await new GitHttpServer(TOKEN).start();
    repo = git.repository('widgets', [
      { name: 'v1', branch: 'main', files: { 'VERSION': '1\n' } },
      { name: 'v2', branch: 'main', files: { 'VERSION': '2\n' } },
      { name: 'feature', branch: 'feature/x', files: { 'FEATURE.md': 'on a branch\n' } },
    ]);
    platform = await startE2ePlatform({
      modelBaseUrl: model.url,
      managerEnv: { BERTH_WORKSPACE_DIR: workspaceDir, BERTH_WORKSPACE_SIZE_MB: '256' },
      upstreamHosts: { [GIT_HOST]: { origin: git.url } },
    });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
    other = new Anthropic({ apiKey: platform.otherApiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await git?.close();
    await model?.close();
    rmSync(workspaceDir, { recursive: true, force: true });
  }, 60_000);

  const send = async (sessionId: string, text: string, turnsBefore: number) => {
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    return waitFor(`turn ${turnsBefore + 1} to end`, async () => {
      const events = await listEvents(client, sessionId);
      return idleCount(events) > turnsBefore ? events : null;
    }, TURN_TIMEOUT_MS, platform.logs);
  };

  /** The repository by its public-looking name. */
  const publicUrl = `http://${GIT_HOST}/widgets.git`;

  const bash = (command: string) => ({ kind: 'turn' as const, text: 'Working.', toolCalls: [{ name: 'Bash', input: { command, description: 'work' } }] });

  it(
    'mounts a file and a repository, captures outputs, keeps the workspace across a rebuild, and removes it with the session',
    async () => {
      const input = `berth input ${randomBytes(8).toString('hex')}\n`;
      const uploaded = await client.beta.files.upload({ file: await toFile(Buffer.from(input), 'input.txt', { type: 'text/plain' }) });
      const agent = await client.beta.agents.create({ name: 'files-agent', model: 'claude-sonnet-4-5', system: 'You work with files.', tools: [{ type: 'agent_toolset_20260401' }] });
      const env = await client.beta.environments.create({
        name: 'files-env',
        config: { type: 'cloud', networking: { type: 'unrestricted' }, harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams,
      });
      const session = await client.beta.sessions.create({
        agent: agent.id,
        environment_id: env.id,
        resources: [
          { type: 'file', file_id: uploaded.id },
          { type: 'github_repository', url: publicUrl, authorization_token: TOKEN, checkout: { type: 'commit', sha: repo.commits.v1 } },
          { type: 'github_repository', url: publicUrl, authorization_token: TOKEN, checkout: { type: 'branch', name: 'feature/x' }, mount_path: '/workspace/widgets-feature' },
        ],
      });
      const mountPath = `/mnt/session/uploads/${uploaded.id}`;
      expect(session.resources.map((r) => r.mount_path)).toEqual([mountPath, '/workspace/widgets', '/workspace/widgets-feature']);

      model.script(
        bash(
          `cat ${mountPath} > /mnt/session/outputs/result.txt && cat /workspace/widgets/VERSION > /mnt/session/outputs/version.txt && git -C /workspace/widgets rev-parse HEAD > /mnt/session/outputs/head.txt && ` +
            `git -C /workspace/widgets-feature rev-parse --abbrev-ref HEAD > /mnt/session/outputs/branch.txt && git -C /workspace/widgets-feature rev-parse HEAD >> /mnt/session/outputs/branch.txt && ` +
            `mkdir -p /workspace/notes && echo kept-in-workspace > /workspace/notes/kept.txt`,
        ),
        reply.text('Done.'),
      );
      const first = await send(session.id, 'Copy the input to the outputs and note what you did.', 0);
      expect(first.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });

      // Listed as soon as the session is idle: outputs are captured before the turn's outcome.
      const outputs = await client.beta.files.list({ scope_id: session.id });
      const byName = new Map(outputs.data.map((f) => [f.filename, f]));
      expect([...byName.keys()].sort()).toEqual(['branch.txt', 'head.txt', 'result.txt', 'version.txt']);
      const result = byName.get('result.txt') as Anthropic.Beta.Files.BetaFileMetadata;
      expect(result).toMatchObject({ scope: { type: 'session', id: session.id }, mime_type: 'text/plain', size_bytes: Buffer.byteLength(input) });
      expect(await (await client.beta.files.download(result.id)).text()).toBe(input);
      expect(await (await client.beta.files.download((byName.get('head.txt') as { id: string }).id)).text()).toBe(`${repo.commits.v1}\n`);
      expect(await (await client.beta.files.download((byName.get('version.txt') as { id: string }).id)).text()).toBe('1\n');
      expect(await (await client.beta.files.download((byName.get('branch.txt') as { id: string }).id)).text()).toBe(`feature/x\n${repo.commits.feature}\n`);
      // The clones went out through the sandbox's egress (to the upstream, by the public name), with the token.
      expect(platform.upstream.requests.filter((r) => r.host === GIT_HOST && r.served).length).toBeGreaterThan(0);
      expect(git.requests.length).toBeGreaterThan(0);
      expect(git.requests.every((r) => r.authorized)).toBe(true);

      for (const id of [uploaded.id, result.id]) {
        await expect(other.beta.files.retrieveMetadata(id)).rejects.toMatchObject({ status: 404 });
        await expect(other.beta.files.download(id)).rejects.toMatchObject({ status: 404 });
      }
      expect((await other.beta.files.list({ scope_id: session.id })).data).toEqual([]);

      // The token was used by the platform only.
      const container = `berth-s-${session.id}-g1`;
      // Everywhere a clone or the platform could write (the image's own /usr and /opt are read-only content).
      const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
      const { lines: traces } = await execIn(
        platform,
        container,
        `grep -rl -e '${TOKEN}' -e '${basic}' /workspace /mnt/session /home/agent /tmp /etc /root /run /var 2>/dev/null; env; cat /proc/1/environ | tr '\\0' '\\n'; cat /workspace/*/.git/config`,
      );
      expect(traces.join('\n')).toContain(`url = ${publicUrl}`);
      expect(traces.join('\n')).not.toContain(TOKEN);
      expect(traces.join('\n')).not.toContain(basic);
      const inspected = JSON.stringify((await platform.runtime.docker.getContainer(container).inspect()).Config);
      expect(inspected).not.toContain(TOKEN);
      expect(inspected).not.toContain(basic);
      expect(JSON.stringify(await listEvents(client, session.id))).not.toContain(TOKEN);
      expect(platform.logs()).not.toContain(TOKEN);

      const workspaceId = (await platform.runtime.inspect(container))?.labels['berth.workspace'] as string;
      await platform.runtime.docker.getContainer(container).kill();
      await waitFor('runtime_unavailable', async () => ((await client.beta.sessions.retrieve(session.id)) as unknown as { berth: { runtime_unavailable?: boolean } }).berth.runtime_unavailable === true, 10_000, platform.logs);

      model.script(bash('cat /workspace/notes/kept.txt > /mnt/session/outputs/kept.txt && cat /workspace/widgets/VERSION >> /mnt/session/outputs/kept.txt'), reply.text('Still here.'));
      await send(session.id, 'Is your note still there?', 1);
      const rebuilt = `berth-s-${session.id}-g2`;
      expect(await platform.runtime.inspect(rebuilt)).toMatchObject({ running: true, labels: expect.objectContaining({ 'berth.workspace': workspaceId }) });
      const kept = (await client.beta.files.list({ scope_id: session.id })).data.find((f) => f.filename === 'kept.txt') as { id: string };
      expect(await (await client.beta.files.download(kept.id)).text()).toBe('kept-in-workspace\n1\n');

      // GET /v1/sessions/{id}/workspace is the sandbox's /workspace, file for file.
      const archive = await fetch(`${platform.gatewayUrl}/v1/sessions/${session.id}/workspace`, { headers: { 'x-api-key': platform.apiKey } });
      expect(archive.status).toBe(200);
      expect(archive.headers.get('content-type')).toBe('application/x-tar');
      const fromApi = await tarFiles(archive.body as unknown as AsyncIterable<Uint8Array>);
      const { lines: sums } = await execIn(platform, rebuilt, 'cd /workspace && find . -type f -exec sha256sum {} + | sort -k2');
      const inSandbox = new Map(sums.map((line) => [line.slice(66).replace(/^\.\//, ''), line.slice(0, 64)]));
      expect(fromApi.get('notes/kept.txt')).toBe(createHash('sha256').update('kept-in-workspace\n').digest('hex'));
      expect(new Map([...fromApi].sort())).toEqual(new Map([...inSandbox].sort()));
      const listing = await fetch(`${platform.gatewayUrl}/v1/sessions/${session.id}/workspace/entries`, { headers: { 'x-api-key': platform.apiKey } });
      expect(((await listing.json()) as { data: { path: string; type: string }[] }).data).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: 'notes', type: 'directory' }), expect.objectContaining({ path: 'widgets', type: 'directory' })]),
      );
      expect((await fetch(`${platform.gatewayUrl}/v1/sessions/${session.id}/workspace`, { headers: { 'x-api-key': platform.otherApiKey } })).status).toBe(404);

      // `berth workspace pull` gives the same tree.
      const pulled = join(workspaceDir, 'pulled');
      const cli = await berth(platform, ['workspace', 'pull', session.id, pulled]);
      expect(cli).toMatchObject({ code: 0 });
      expect(new Map([...localTree(pulled)].sort())).toEqual(new Map([...inSandbox].sort()));
      expect((await berth(platform, ['workspace', 'pull', session.id, pulled])).code).toBe(2);

      // Loop workspaces (root on the engine host) are an image file; volume workspaces are named volumes.
      const image = join(workspaceDir, 'images', `${workspaceId}.img`);
      const volume = platform.runtime.docker.getVolume(`berth-ws-${workspaceId}-workspace`);
      const exists = async () => existsSync(image) || (await volume.inspect().then(() => true, () => false));
      expect(await exists()).toBe(true);
      await client.beta.sessions.delete(session.id);
      await waitFor('the workspace to be removed', async () => !(await exists()), 20_000, platform.logs);
      expect(await platform.runtime.inspect(rebuilt)).toBeNull();
    },
    600_000,
  );

  it(
    "clones only what the sandbox may reach: loopback, a private address and a host a limited environment does not allow fail the resource with the egress's words",
    async () => {
      const agent = await client.beta.agents.create({ name: 'limited-agent', model: 'claude-sonnet-4-5', system: 'You clone.', tools: [{ type: 'agent_toolset_20260401' }] });
      const env = await client.beta.environments.create({
        name: 'limited-env',
        config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['allowed.test'] }, harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams,
      });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
      const servedBefore = git.requests.length;
      const upstreamBefore = platform.upstream.requests.filter((r) => r.host === GIT_HOST).length;
      const cases = [
        { url: `${git.url}/widgets.git`, host: '127.0.0.1', words: /Berth egress refused 127\.0\.0\.1:\d+/ },
        { url: 'http://10.20.30.40/widgets.git', host: '10.20.30.40', words: /Berth egress refused 10\.20\.30\.40:80/ },
        { url: publicUrl, host: GIT_HOST, words: new RegExp(`"${GIT_HOST.replace(/\./g, '\\.')}" is not in config\.networking\.allowed_hosts`) },
      ];
      for (const [turn, c] of cases.entries()) {
        const answer = await fetch(`${platform.gatewayUrl}/v1/sessions/${session.id}/resources`, {
          method: 'POST',
          headers: { 'x-api-key': platform.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'github_repository', url: c.url, authorization_token: TOKEN }),
        });
        expect(answer.status).toBe(200);
        const added = (await answer.json()) as { id: string };
        const events = await send(session.id, 'Look at the repository.', turn);
        const error = events.filter((e) => e.type === 'session.error').at(-1) as { error: { type: string; message: string } } | undefined;
        expect(error?.error.type).toBe('berth.resource_unavailable_error');
        expect(error?.error.message).toContain(`repository ${c.url} (resource ${added.id}) could not be cloned: the sandbox's egress refused it: `);
        expect(error?.error.message).toMatch(c.words);
        expect(error?.error.message).not.toContain(TOKEN);
        expect(events.filter((e) => e.type === 'berth.egress_denied')).toEqual(expect.arrayContaining([expect.objectContaining({ host: c.host })]));
        await client.beta.sessions.resources.delete(added.id, { session_id: session.id });
      }
      // None of them reached anything: not the git server on loopback, not the upstream for the host not allowed.
      expect(git.requests.length).toBe(servedBefore);
      expect(platform.upstream.requests.filter((r) => r.host === GIT_HOST).length).toBe(upstreamBefore);
      await client.beta.sessions.delete(session.id);
    },
    600_000,
  );
});

const BERTH = join(__dirname, '..', '..', '..', '..', 'bin', 'berth');

function berth(platform: E2ePlatform, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(BERTH, args, { env: { ...process.env, BERTH_API_URL: platform.gatewayUrl, BERTH_API_KEY: platform.apiKey }, timeout: 120_000 }, (error, _stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr });
    });
  });
}

/** Relative path → sha256 of every regular file below `root`. */
function localTree(root: string, prefix = ''): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(join(root, prefix))) {
    const relative = prefix ? `${prefix}/${name}` : name;
    const stat = statSync(join(root, relative), { throwIfNoEntry: false });
    if (stat?.isDirectory()) for (const [k, v] of localTree(root, relative)) files.set(k, v);
    else if (stat?.isFile()) files.set(relative, createHash('sha256').update(readFileSync(join(root, relative))).digest('hex'));
  }
  return files;
}

async function execIn(platform: E2ePlatform, container: string, script: string): Promise<{ lines: string[]; exitCode: number }> {
  const handle = await platform.runtime.exec(container, { cmd: ['/bin/sh', '-c', script], stdin: '' });
  const lines: string[] = [];
  for await (const line of handle.lines) lines.push(line);
  return { lines, exitCode: await handle.exit };
}
