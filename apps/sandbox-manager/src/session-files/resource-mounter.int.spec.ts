import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { sessionSecretAad, type SealedSecret } from '@berth/contracts';
import { DockerSandboxRuntime, sessionLayoutArchive, VolumeWorkspaces } from '@berth/docker';
import { AesGcmSecretBox, parseSecretKeys } from '@berth/secrets';
import { ensureDockerTestEngine, GitHttpServer, MemoryStore, recordingLogger, type TestRepository } from '@berth/testing';
import { RepositoryCloner } from './repository-cloner';
import { ResourceMounter, ResourceUnavailable } from './resource-mounter';

jest.setTimeout(120_000);

const TOKEN = `ghp_${randomBytes(12).toString('hex')}`;
const engine = ensureDockerTestEngine();
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost });
const run = `m${randomBytes(4).toString('hex')}`;
const scope = { 'berth.test-run': run };
const workspaces = new VolumeWorkspaces(runtime.docker, scope);
const STAMP = '2026-01-01T00:00:00.000Z';

const box = new AesGcmSecretBox(parseSecretKeys(`k1:${randomBytes(32).toString('base64')}`));
const GIT_HOST = 'git.widgets.test';

/**
 * Stands in for the egress on a sandbox's socket (the real one is in the end-to-end test): plain
 * HTTP in absolute form, `GIT_HOST` served by the test's git server, every other host refused the
 * way the egress refuses (403, `x-berth-egress-denied`, a message body). Records what it was asked.
 */
class StandInEgress {
  readonly asked: string[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'berth-egress-'));
  readonly socket = join(this.dir, 'egress.sock');
  private readonly server: Server = createServer((req, res) => this.answer(req, res));

  constructor(private readonly origin: () => string) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(this.socket, resolve));
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '');
    this.asked.push(url.host);
    if (url.hostname !== GIT_HOST) {
      req.resume();
      res.writeHead(403, { 'content-type': 'text/plain', 'x-berth-egress-denied': 'not_allowed' }).end(`Berth egress refused ${url.host}: not in config.networking.allowed_hosts.\n`);
      return;
    }
    const target = new URL(this.origin());
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: `${url.pathname}${url.search}`, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  }
}

async function sh(container: string, script: string): Promise<string> {
  const handle = await runtime.exec(container, { cmd: ['/bin/sh', '-c', script], stdin: '' });
  const lines: string[] = [];
  for await (const line of handle.lines) lines.push(line);
  await handle.exit;
  return lines.join('\n');
}

describe('resources mounted into a real sandbox', () => {
  const git = new GitHttpServer(TOKEN);
  const store = new MemoryStore();
  const logged = recordingLogger();
  const egress = new StandInEgress(() => git.url);
  let egressSocket: string | null = null;
  const mounter = new ResourceMounter({
    runtime,
    files: store.files,
    blobs: store.blobs,
    secrets: store.secrets,
    box,
    cloner: new RepositoryCloner(),
    egressSocketOf: async (id) => (id === sandbox ? egressSocket : null),
    log: logged.log,
  });
  let repo: TestRepository;
  let url: string;
  let sandbox: string;
  const session = `sesn_${run}`;

  beforeAll(async () => {
    await git.start();
    await egress.start();
    egressSocket = egress.socket;
    repo = git.repository('widgets', [
      { name: 'first', branch: 'main', files: { 'README.md': 'first\n' } },
      { name: 'second', branch: 'main', files: { 'README.md': 'second\n' } },
      { name: 'feature', branch: 'feature/x', files: { 'FEATURE.md': 'on a branch\n' } },
    ]);
    url = repo.url.replace(git.url, `http://${GIT_HOST}`);
    const workspace = await workspaces.forSession(session, 1024 ** 3);
    const info = await runtime.ensureRunning({
      name: `berth-s-${run}-g1`,
      image: engine.baseImage,
      labels: { 'berth.managed': 'true', ...scope },
      env: { HOME: '/home/agent' },
      network: 'none',
      user: '1000:1000',
      workdir: '/workspace',
      memoryBytes: 256 * 1024 * 1024,
      nanoCpus: 500_000_000,
      pidsLimit: 64,
      readOnlyRoot: false,
      cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep infinity & wait"],
      mounts: workspace.mounts,
    });
    sandbox = info.name;
    await runtime.putArchive(sandbox, '/mnt/session', sessionLayoutArchive());
  });
  afterAll(async () => {
    await runtime.remove(sandbox);
    await workspaces.removeSession(session);
    await git.close();
    await egress.close();
    const { Volumes } = await runtime.docker.listVolumes({ filters: JSON.stringify({ label: [`berth.test-run=${run}`] }) });
    for (const volume of Volumes ?? []) await runtime.docker.getVolume(volume.Name).remove();
  });

  const repoResource = (id: string, mount_path: string, checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null) =>
    ({ type: 'github_repository' as const, id, url, checkout, mount_path, created_at: STAMP, updated_at: STAMP });

  const putToken = (name: string) => store.secrets.put(session, name, box.seal(TOKEN, sessionSecretAad(session, name)));

  it('clones a private repository through the sandbox egress at a branch and at a commit, owned by the sandbox user, with no trace of the token', async () => {
    await putToken('sesrsc_branch');
    await putToken('sesrsc_commit');
    await mounter.ensure({
      ownerId: 'owner_a',
      sessionId: session,
      sandboxId: sandbox,
      resources: [repoResource('sesrsc_branch', '/workspace/widgets', { type: 'branch', name: 'feature/x' }), repoResource('sesrsc_commit', '/workspace/old', { type: 'commit', sha: repo.commits.first })],
    });
    // The base image has no git: read what git wrote (HEAD, the branch ref, the remote).
    expect(await sh(sandbox, 'cd /workspace/widgets && cat .git/HEAD .git/refs/heads/feature/x FEATURE.md')).toBe(`ref: refs/heads/feature/x\n${repo.commits.feature}\non a branch`);
    expect(await sh(sandbox, 'cd /workspace/old && cat .git/HEAD README.md')).toBe(`${repo.commits.first}\nfirst`);
    expect(await sh(sandbox, 'stat -c %u:%g /workspace/widgets /workspace/widgets/.git /workspace/old/README.md')).toBe('1000:1000\n1000:1000\n1000:1000');
    expect(await sh(sandbox, 'grep -A2 \'\\[remote "origin"\\]\' /workspace/widgets/.git/config | grep url')).toBe(`\turl = ${url}`);
    // Every request of both clones went through the sandbox's egress, with the token.
    expect(egress.asked.length).toBeGreaterThan(0);
    expect(new Set(egress.asked)).toEqual(new Set([GIT_HOST]));
    expect(git.requests.length).toBeGreaterThan(0);
    expect(await sh(sandbox, 'touch /workspace/widgets/.git/index && echo writable')).toBe('writable');

    const encoded = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    const traces = await sh(sandbox, `grep -rl -e '${TOKEN}' -e '${encoded}' / --exclude-dir=proc --exclude-dir=sys 2>/dev/null; env; cat /proc/1/environ | tr '\\0' '\\n'; cat /workspace/*/.git/config`);
    expect(traces).not.toContain(TOKEN);
    expect(traces).not.toContain(encoded);
    const [inspected] = (await runtime.docker.getContainer(sandbox).inspect()).Config.Env ?? [];
    expect(String(inspected)).not.toContain(TOKEN);
    expect(git.requests.every((r) => r.authorized)).toBe(true);
    const lines = JSON.stringify(logged.lines);
    expect(lines).toContain('repository cloned');
    expect(lines).not.toContain(TOKEN);
    expect(lines).not.toContain(encoded);
  });

  it('mounts an uploaded file at its path, leaves what is already there, and names a resource it cannot mount', async () => {
    await store.blobs.put('blob_up', Readable.from([Buffer.from('col\n1\n')]));
    await store.files.put({ id: 'file_up', owner_id: 'owner_a', filename: 'data.csv', mime_type: 'text/csv', size_bytes: 6, created_at: STAMP, expires_at: null, downloadable: true, scope: null, blob_key: 'blob_up', sha256: '', output: null, deleted: false });
    const file = { type: 'file' as const, id: 'sesrsc_file', file_id: 'file_up', mount_path: '/workspace/input/data.csv', created_at: STAMP, updated_at: STAMP };
    await mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [file] });
    expect(await sh(sandbox, 'cat /workspace/input/data.csv; stat -c %u /workspace/input /workspace/input/data.csv')).toBe('col\n1\n1000\n1000');
    await sh(sandbox, 'echo changed > /workspace/input/data.csv');
    mounter.forget(sandbox);
    await mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [file] });
    expect(await sh(sandbox, 'cat /workspace/input/data.csv')).toBe('changed');

    const missing = { ...file, id: 'sesrsc_gone', file_id: 'file_gone', mount_path: '/home/agent/gone.txt' };
    await expect(mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [missing] })).rejects.toThrow(ResourceUnavailable);
    const denied = repoResource('sesrsc_denied', '/workspace/denied', null);
    const failure = await mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [denied] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ResourceUnavailable);
    expect(String((failure as Error).message)).toMatch(/sesrsc_denied.*could not be cloned/);
    expect(await sh(sandbox, 'ls /workspace')).not.toContain('denied');
  });

  it("fails a clone the egress refuses with the egress's own words, a token moved to another resource, and a sandbox without an egress", async () => {
    const refusedUrl = 'http://10.0.0.7/internal/tools.git';
    const refused = { ...repoResource('sesrsc_refused', '/workspace/tools', null), url: refusedUrl };
    const failure = (await mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [refused] }).catch((e: unknown) => e)) as Error;
    expect(failure).toBeInstanceOf(ResourceUnavailable);
    expect(failure.message).toBe(`repository ${refusedUrl} (resource sesrsc_refused) could not be cloned: the sandbox's egress refused it: Berth egress refused 10.0.0.7: not in config.networking.allowed_hosts.`);
    expect(egress.asked).toContain('10.0.0.7');

    await store.secrets.put(session, 'sesrsc_moved', (await store.secrets.get(session, 'sesrsc_branch')) as SealedSecret);
    const moved = repoResource('sesrsc_moved', '/workspace/moved', null);
    await expect(mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [moved] })).rejects.toThrow(/token of repository resource sesrsc_moved could not be opened/);

    egressSocket = null;
    mounter.forget(sandbox);
    const again = repoResource('sesrsc_noegress', '/workspace/noegress', null);
    await expect(mounter.ensure({ ownerId: 'owner_a', sessionId: session, sandboxId: sandbox, resources: [again] })).rejects.toThrow(/has no egress socket on this manager's machine, which clones go out through/);
    egressSocket = egress.socket;
    expect(await sh(sandbox, 'ls /workspace')).not.toMatch(/tools|moved|noegress/);
  });
});
