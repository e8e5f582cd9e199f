import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { sessionSecretAad, type SealedSecret } from '@berth/contracts';
import { MongoClient } from 'mongodb';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call } from './support/api';

const TOKEN = 'ghp_berthTestToken0123456789';

/** The token as the store holds it, opened with the gateway's box (null: none stored). */
async function storedToken(gw: GatewayHarness, sessionId: string, resourceId: string): Promise<string | null> {
  const sealed = await gw.store.secrets.get(sessionId, resourceId);
  return sealed === null ? null : gw.secrets.open(sealed, sessionSecretAad(sessionId, resourceId));
}

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
    expect(await storedToken(gw, session.id, repo.id)).toBe(TOKEN);

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
    expect(await storedToken(gw, session.id, repo.json.id)).toBe('ghp_rotated');
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
      [{ type: 'github_repository', url: 'https://user:pw@github.com/a/b.git' }, 400, 'REPOSITORY_URL_NOT_SUPPORTED'],
      [{ type: 'github_repository', url: 'ssh://git@github.com/a/b.git' }, 400, 'REPOSITORY_URL_NOT_SUPPORTED'],
      [{ type: 'github_repository', url: 'file:///etc/passwd' }, 400, 'REPOSITORY_URL_NOT_SUPPORTED'],
      [{ type: 'github_repository', url: 'ext::sh -c touch% /tmp/pwned' }, 400, 'REPOSITORY_URL_NOT_SUPPORTED'],
      [{ type: 'github_repository', url: 'git://github.com/a/b.git' }, 400, 'REPOSITORY_URL_NOT_SUPPORTED'],
      [{ type: 'github_repository', url: 'git@github.com:a/b.git' }, 400, 'REPOSITORY_URL_NOT_SUPPORTED'],
      [{ type: 'github_repository', url: 'https://github.com/a/b.git', checkout: { type: 'branch', name: '--upload-pack=x' } }, 400, 'VALIDATION_ERROR'],
      [{ type: 'github_repository', url: 'https://github.com/a/b.git', checkout: { type: 'commit', sha: 'HEAD; rm' } }, 400, 'VALIDATION_ERROR'],
      [{ type: 'memory_store', memory_store_id: 'memstore_1' }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [body, status, code] of cases) {
      const res = await attempt(body);
      expect([JSON.stringify(body), res.status, res.json.error.code]).toEqual([JSON.stringify(body), status, code]);
    }
    const viaCreate = await call(gw.url, gw.keyA, 'POST', '/v1/sessions', { agent: agentId, environment_id: envId, resources: [{ type: 'github_repository', url: 'ssh://git@github.com/a/b.git' }] });
    expect([viaCreate.status, viaCreate.json.error.code, viaCreate.json.error.message]).toEqual([400, 'REPOSITORY_URL_NOT_SUPPORTED', expect.stringContaining('must be an http(s) URL')]);
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

/**
 * What the store holds at rest: the token sealed (AES-GCM under the server key), so neither it nor
 * the Basic credential a clone sends appears in the stored bytes. SQLite: the database file and its
 * WAL; MongoDB (where MONGODB_URI is set): every document of the database.
 */
describe('repository tokens at rest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const mongoUri = process.env.MONGODB_URI;
  if (!mongoUri) console.log('NOT RUN: repository tokens at rest in MongoDB (MONGODB_URI is not set)');

  const encodings = (token: string) => [token, Buffer.from(token).toString('base64'), Buffer.from(`x-access-token:${token}`).toString('base64')];

  async function sealedAtRest(storeUrl: string, persisted: () => Promise<string>): Promise<void> {
    const token = `ghp_atRest${Date.now().toString(36)}Token`;
    const gw = await startGateway({ turnRunner: false, storeUrl });
    try {
      const a = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
      const agent = (await a.beta.agents.create({ name: 'r', model: 'claude-sonnet-4-5' })).id;
      const env = (await a.beta.environments.create({ name: 'r' })).id;
      const session = await a.beta.sessions.create({ agent, environment_id: env, resources: [{ type: 'github_repository', url: 'https://github.com/acme/widgets.git', authorization_token: token }] });
      const repo = session.resources[0] as { id: string };
      const added = (await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${session.id}/resources`, { type: 'github_repository', url: 'https://github.com/acme/tools.git', authorization_token: `${token}-added` })).json as { id: string };
      await a.beta.sessions.resources.update(repo.id, { session_id: session.id, authorization_token: `${token}-rotated` });
      const bytes = await persisted();
      // The dump is where the secrets are: the sealed form is in it…
      expect(bytes).toContain((await gw.store.secrets.get(session.id, repo.id))?.ciphertext);
      // …and no plaintext in any form.
      for (const secret of [token, `${token}-added`, `${token}-rotated`]) for (const form of encodings(secret)) expect(bytes).not.toContain(form);
      expect(await storedToken(gw, session.id, repo.id)).toBe(`${token}-rotated`);
      expect(await storedToken(gw, session.id, added.id)).toBe(`${token}-added`);
      // Sealed to its record: the same sealed value under another resource does not open.
      await gw.store.secrets.put(session.id, 'sesrsc_other', (await gw.store.secrets.get(session.id, repo.id)) as SealedSecret);
      await expect(storedToken(gw, session.id, 'sesrsc_other')).rejects.toMatchObject({ code: 'SECRET_UNREADABLE' });
    } finally {
      await gw.close();
    }
  }

  it('SQLite: the database file holds no token in any form', async () => {
    const path = join(dir, 'berth.db');
    await sealedAtRest(`sqlite:${path}`, async () => [path, `${path}-wal`].filter(existsSync).map((p) => readFileSync(p).toString('latin1')).join('\n'));
  });

  (mongoUri ? it : it.skip)('MongoDB: no document holds a token in any form', async () => {
    const dbName = `berth_secrets_${process.pid}`;
    const client = await new MongoClient(mongoUri as string).connect();
    try {
      const url = new URL(mongoUri as string);
      url.pathname = `/${dbName}`;
      await sealedAtRest(url.toString(), async () => {
        const db = client.db(dbName);
        const docs = [];
        for (const { name } of await db.listCollections().toArray()) docs.push(...(await db.collection(name).find().toArray()));
        return JSON.stringify(docs);
      });
    } finally {
      await client.db(dbName).dropDatabase();
      await client.close();
    }
  });

  it('without a server key, a repository token is refused with 503 SECRETS_NOT_CONFIGURED and nothing is created', async () => {
    const gw = await startGateway({ turnRunner: false, secretKeys: false });
    try {
      const a = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
      const agent = (await a.beta.agents.create({ name: 'r', model: 'claude-sonnet-4-5' })).id;
      const env = (await a.beta.environments.create({ name: 'r' })).id;
      const refused = await call(gw.url, gw.keyA, 'POST', '/v1/sessions', { agent, environment_id: env, resources: [{ type: 'github_repository', url: 'https://github.com/acme/widgets.git', authorization_token: 'ghp_x' }] });
      expect([refused.status, refused.json.error.code]).toEqual([503, 'SECRETS_NOT_CONFIGURED']);
      expect((await a.beta.sessions.list()).data).toEqual([]);
      const tokenless = await a.beta.sessions.create({ agent, environment_id: env, resources: [{ type: 'github_repository', url: 'https://github.com/acme/widgets.git' }] });
      expect(tokenless.resources).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });
});
