import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call } from './support/api';

const TOKEN = 'ghp_berthTestToken0123456789';

describe('session resources through the official SDK', () => {
  let gw: GatewayHarness;
  let a: Anthropic;
  let b: Anthropic;
  let agentId: string;
  let envId: string;
  let fileId: string;

  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false });
    a = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
    b = new Anthropic({ apiKey: gw.keyB, baseURL: gw.url, maxRetries: 0 });
    agentId = (await a.beta.agents.create({ name: 'r', model: 'claude-sonnet-4-5' })).id;
    envId = (await a.beta.environments.create({ name: 'r' })).id;
    fileId = (await a.beta.files.upload({ file: await toFile(Buffer.from('data'), 'data.csv') })).id;
  });
  afterAll(() => gw.close());

  it('creates a session with a file and a repository, defaults their mount paths and never shows the token', async () => {
    const session = await a.beta.sessions.create({
      agent: agentId,
      environment_id: envId,
      resources: [
        { type: 'file', file_id: fileId },
        { type: 'github_repository', url: 'https://github.com/acme/widgets.git', authorization_token: TOKEN, checkout: { type: 'branch', name: 'release/1.2' } },
      ],
    });
    expect(session.resources).toEqual([
      { type: 'file', id: expect.stringMatching(/^sesrsc_/), file_id: fileId, mount_path: `/mnt/session/uploads/${fileId}`, created_at: expect.any(String), updated_at: expect.any(String) },
      {
        type: 'github_repository',
        id: expect.stringMatching(/^sesrsc_/),
        url: 'https://github.com/acme/widgets.git',
        checkout: { type: 'branch', name: 'release/1.2' },
        mount_path: '/workspace/widgets',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    const repo = session.resources[1] as { id: string };
    expect(await gw.store.secrets.get(session.id, repo.id)).toBe(TOKEN);

    const listed = [];
    for await (const r of a.beta.sessions.resources.list(session.id)) listed.push(r);
    expect(listed).toEqual(session.resources);
    expect(await a.beta.sessions.resources.retrieve(repo.id, { session_id: session.id })).toEqual(session.resources[1]);

    const seen = JSON.stringify([await a.beta.sessions.retrieve(session.id), listed, await gw.store.journal.readEvents(session.id), (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${session.id}/events`)).json]);
    expect(seen).not.toContain(TOKEN);
    expect(seen).toContain('berth.session_resource_added');
  });

  it('adds, rotates, removes; the mount path frees up; deleting the session drops its secrets', async () => {
    const session = await a.beta.sessions.create({ agent: agentId, environment_id: envId });
    const file = await a.beta.sessions.resources.add(session.id, { type: 'file', file_id: fileId, mount_path: '/workspace/input/data.csv' });
    expect(file).toMatchObject({ type: 'file', file_id: fileId, mount_path: '/workspace/input/data.csv' });
    const repo = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${session.id}/resources`, { type: 'github_repository', url: 'http://127.0.0.1:9/r.git', authorization_token: TOKEN, checkout: { type: 'commit', sha: 'a'.repeat(40) } });
    expect(repo.status).toBe(200);
    expect(repo.json).toMatchObject({ mount_path: '/workspace/r', checkout: { type: 'commit', sha: 'a'.repeat(40) } });

    const rotated = await a.beta.sessions.resources.update(repo.json.id, { session_id: session.id, authorization_token: 'ghp_rotated' });
    expect(rotated).toEqual(repo.json);
    expect(await gw.store.secrets.get(session.id, repo.json.id)).toBe('ghp_rotated');
    await expect(a.beta.sessions.resources.update(file.id, { session_id: session.id, authorization_token: 'x' })).rejects.toMatchObject({ status: 400 });

    const clash = await a.beta.sessions.resources.add(session.id, { type: 'file', file_id: fileId, mount_path: '/workspace/input' }).catch((e: unknown) => e);
    expect(clash).toMatchObject({ status: 409, error: { error: { code: 'MOUNT_PATH_CONFLICT' } } });

    expect(await a.beta.sessions.resources.delete(file.id, { session_id: session.id })).toEqual({ id: file.id, type: 'session_resource_deleted' });
    await expect(a.beta.sessions.resources.retrieve(file.id, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await a.beta.sessions.resources.add(session.id, { type: 'file', file_id: fileId, mount_path: '/workspace/input' });
    expect((await a.beta.sessions.retrieve(session.id)).resources.map((r) => r.type)).toEqual(['github_repository', 'file']);

    await a.beta.sessions.delete(session.id);
    expect(await gw.store.secrets.get(session.id, repo.json.id)).toBeNull();
  });

  it('refuses bad resources with a 4xx that names the problem', async () => {
    const session = await a.beta.sessions.create({ agent: agentId, environment_id: envId });
    const attempt = (body: unknown) => call(gw.url, gw.keyA, 'POST', `/v1/sessions/${session.id}/resources`, body);
    const cases: [unknown, number, string][] = [
      [{ type: 'file', file_id: fileId, mount_path: 'relative/path' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'file', file_id: fileId, mount_path: '/etc/passwd' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'file', file_id: fileId, mount_path: '/workspace/../etc/x' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'file', file_id: fileId, mount_path: '/home/agent/.berth/turns/x' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'file', file_id: fileId, mount_path: '/mnt/session/outputs/x' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'file', file_id: 'file_missing' }, 404, 'FILE_NOT_FOUND'],
      [{ type: 'github_repository', url: 'https://user:pw@github.com/a/b.git' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'github_repository', url: 'ssh://git@github.com/a/b.git' }, 400, 'VALIDATION_ERROR'],
      [{ type: 'github_repository', url: 'https://github.com/a/b.git', checkout: { type: 'branch', name: '--upload-pack=x' } }, 400, 'VALIDATION_ERROR'],
      [{ type: 'github_repository', url: 'https://github.com/a/b.git', checkout: { type: 'commit', sha: 'HEAD; rm' } }, 400, 'VALIDATION_ERROR'],
      [{ type: 'memory_store', memory_store_id: 'memstore_1' }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [body, status, code] of cases) {
      const res = await attempt(body);
      expect([JSON.stringify(body), res.status, res.json.error.code]).toEqual([JSON.stringify(body), status, code]);
    }
    const created = await call(gw.url, gw.keyA, 'POST', '/v1/sessions', { agent: agentId, environment_id: envId, resources: [{ type: 'file', file_id: fileId, mount_path: '/workspace/a' }, { type: 'file', file_id: fileId, mount_path: '/workspace/a' }] });
    expect(created.status).toBe(409);
    expect(created.json.error.code).toBe('MOUNT_PATH_CONFLICT');
  });

  it("keeps another owner out of a session's resources and refuses their files as resources", async () => {
    const session = await a.beta.sessions.create({ agent: agentId, environment_id: envId, resources: [{ type: 'file', file_id: fileId }] });
    const resourceId = (session.resources[0] as { id: string }).id;
    await expect(b.beta.sessions.resources.list(session.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.beta.sessions.resources.retrieve(resourceId, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await expect(b.beta.sessions.resources.delete(resourceId, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await expect(b.beta.sessions.resources.add(session.id, { type: 'file', file_id: fileId })).rejects.toMatchObject({ status: 404 });
    const bAgent = (await b.beta.agents.create({ name: 'b', model: 'claude-sonnet-4-5' })).id;
    const bEnv = (await b.beta.environments.create({ name: 'b' })).id;
    await expect(b.beta.sessions.create({ agent: bAgent, environment_id: bEnv, resources: [{ type: 'file', file_id: fileId }] })).rejects.toMatchObject({ status: 404 });
    expect((await a.beta.sessions.resources.list(session.id)).data).toHaveLength(1);
  });
});
