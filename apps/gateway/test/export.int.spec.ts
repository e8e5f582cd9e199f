import { Readable } from 'node:stream';
import { classifyArchiveEntry, parseArchiveJournal, parseArchiveManifest } from '@berth/contracts';
import { extract } from 'tar-stream';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call, seedSession, userMessage } from './support/api';
import { waitFor } from './support/wait-for';

/** Every entry of a tar, checked as an import checks it (the archive is read back through the same contract). */
async function entriesOf(bytes: Buffer): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  const seen = new Set<string>();
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on('entry', (header, stream, next) => {
      const kind = classifyArchiveEntry({ name: header.name, type: header.type ?? 'file', size: header.size ?? 0 }, seen);
      seen.add(header.name);
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        if (kind.kind !== 'directory') entries.set(header.name, Buffer.concat(chunks).toString('utf8'));
        next();
      });
    });
    reader.on('finish', resolve);
    reader.on('error', reject);
  });
  Readable.from([bytes]).pipe(reader);
  await done;
  return entries;
}

describe('GET /v1/sessions/{id}/export', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  const exportOf = (key: string, id: string) => fetch(`${gw.url}/v1/sessions/${id}/export`, { headers: { 'x-api-key': key } });

  it('streams one archive: the manifest first, the whole journal, the harness transcripts; no secret; the owner only; refused while a turn runs', async () => {
    const { sessionId, fileId, resourceId } = await seedSession(gw.url, gw.keyA);
    await waitFor(async () => (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?types[]=berth.sandbox_bound`)).json.data.length === 1);
    const transcript = '{"type":"user","message":"hello"}\n';
    await gw.store.transcripts.append({ session_id: sessionId, path: '/home/agent/.claude/projects/-workspace/hs-1.jsonl', offset: 0, data: transcript });
    const repo = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/resources`, { type: 'github_repository', url: 'https://github.com/acme/app.git', authorization_token: 'ghp_secret_never_exported' });
    expect(repo.status).toBe(200);

    const response = await exportOf(gw.keyA, sessionId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-tar');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.toString('latin1')).not.toContain('ghp_secret_never_exported');
    const entries = await entriesOf(bytes);
    expect([...entries.keys()][0]).toBe('manifest.json');
    const manifest = parseArchiveManifest(entries.get('manifest.json') ?? '');
    expect(manifest).toMatchObject({ source: { session_id: sessionId, harness: 'claude-code' }, workspace: false, outputs: [] });
    expect(manifest.session).toMatchObject({ id: sessionId, type: 'session' });
    // The session's resources are listed as the API shows them: what and where, never the token.
    expect(manifest.session['resources']).toEqual([
      expect.objectContaining({ id: resourceId, type: 'file', file_id: fileId, mount_path: `/mnt/session/uploads/${fileId}` }),
      expect.objectContaining({ id: repo.json.id, type: 'github_repository', url: 'https://github.com/acme/app.git', mount_path: '/workspace/app' }),
    ]);
    expect(JSON.stringify(manifest)).not.toContain('authorization_token');
    expect(manifest.agent).toMatchObject({ type: 'agent', model: { id: 'claude-sonnet-4-5' } });
    const journal = parseArchiveJournal(entries.get('journal.jsonl') ?? '', manifest);
    const listed = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?limit=1000`);
    expect(journal.map((e) => e.id)).toEqual(listed.json.data.map((e: { id: string }) => e.id));
    expect(entries.get('transcripts/home/agent/.claude/projects/-workspace/hs-1.jsonl')).toBe(transcript);

    expect((await exportOf(gw.keyB, sessionId)).status).toBe(404);

    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('busy now'));
    const busy = await exportOf(gw.keyA, sessionId);
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');
  });
});
