import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call, upload } from './support/api';

const MAX_BYTES = 256 * 1024;

/** A multipart upload sent with chunked encoding (no Content-Length): the limit is found while streaming. */
function chunkedUpload(base: string, key: string, size: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const boundary = 'berthboundary';
    const req = request(`${base}/v1/files`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const chunk = Buffer.alloc(16 * 1024, 7);
    for (let sent = 0; sent < size; sent += chunk.length) req.write(chunk);
    req.end(`\r\n--${boundary}--\r\n`);
  });
}

describe('Files API through the official SDK', () => {
  let gw: GatewayHarness;
  let a: Anthropic;
  let b: Anthropic;
  let dir: string;

  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false, gateway: { fileMaxBytes: MAX_BYTES } });
    a = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
    b = new Anthropic({ apiKey: gw.keyB, baseURL: gw.url, maxRetries: 0 });
    dir = mkdtempSync(join(tmpdir(), 'berth-files-'));
  });
  afterAll(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads, retrieves, downloads, lists and deletes a file', async () => {
    const uploaded = await a.beta.files.upload({ file: await toFile(Buffer.from('hello, berth\n'), 'notes/hello.txt', { type: 'text/plain' }) });
    expect(uploaded).toEqual({
      type: 'file',
      id: expect.stringMatching(/^file_/),
      filename: 'hello.txt',
      mime_type: 'text/plain',
      size_bytes: 13,
      created_at: expect.any(String),
      expires_at: null,
      downloadable: true,
      scope: null,
    });
    expect(await a.beta.files.retrieveMetadata(uploaded.id)).toEqual(uploaded);

    const content = await a.beta.files.download(uploaded.id);
    expect(content.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(content.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''hello.txt");
    expect(await content.text()).toBe('hello, berth\n');

    const listed = [];
    for await (const file of a.beta.files.list()) listed.push(file.id);
    expect(listed).toContain(uploaded.id);

    expect(await a.beta.files.delete(uploaded.id)).toEqual({ id: uploaded.id, type: 'file_deleted' });
    await expect(a.beta.files.retrieveMetadata(uploaded.id)).rejects.toMatchObject({ status: 404 });
    await expect(a.beta.files.download(uploaded.id)).rejects.toMatchObject({ status: 404 });
    await expect(a.beta.files.delete(uploaded.id)).rejects.toMatchObject({ status: 404 });
    const after = await a.beta.files.list();
    expect(after.data.map((f) => f.id)).not.toContain(uploaded.id);
  });

  it('streams a file from disk, names an unnamed upload and derives the media type from the name', async () => {
    const path = join(dir, 'data.json');
    writeFileSync(path, JSON.stringify({ rows: Array.from({ length: 5000 }, (_, i) => i) }));
    const fromDisk = await a.beta.files.upload({ file: createReadStream(path) });
    expect(fromDisk).toMatchObject({ filename: 'data.json', mime_type: 'application/json' });
    expect(JSON.parse(await (await a.beta.files.download(fromDisk.id)).text()).rows).toHaveLength(5000);

    const unnamed = await upload(gw.url, gw.keyA, '', 'x');
    expect(unnamed.status).toBe(200);
    expect(unnamed.json.filename).toMatch(/^unnamed/);
  });

  it('pages through files newest first, and filters by ids', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await a.beta.files.upload({ file: await toFile(Buffer.from(`f${i}`), `page-${i}.txt`) })).id);
    const first = await a.beta.files.list({ limit: 2 });
    expect(first.data.map((f) => f.id)).toEqual([ids[4], ids[3]]);
    expect(first.next_page).not.toBeNull();
    const second = await a.beta.files.list({ limit: 2, page: first.next_page });
    expect(second.data.map((f) => f.id)).toEqual([ids[2], ids[1]]);
    const picked = await a.beta.files.list({ ids: [ids[0], ids[3], 'file_unknown'] });
    expect(picked.data.map((f) => f.id).sort()).toEqual([ids[0], ids[3]].sort());
    expect(picked.next_page).toBeNull();
    const both = await call(gw.url, gw.keyA, 'GET', `/v1/files?limit=2&ids[]=${ids[0]}`);
    expect(both.status).toBe(400);
    expect(both.json.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers 404 to another owner on metadata, content and delete, and lists nothing of theirs', async () => {
    const mine = await a.beta.files.upload({ file: await toFile(Buffer.from('secret'), 'secret.txt') });
    await expect(b.beta.files.retrieveMetadata(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.beta.files.download(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.beta.files.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    expect((await b.beta.files.list({ ids: [mine.id] })).data).toEqual([]);
    expect(await (await a.beta.files.download(mine.id)).text()).toBe('secret');
  });

  it('refuses a file over the limit with 413 FILE_TOO_LARGE, declared or streamed, and keeps nothing', async () => {
    const before = (await a.beta.files.list({ limit: 100 })).data.length;
    const declared = await a.beta.files.upload({ file: await toFile(Buffer.alloc(MAX_BYTES * 2, 1), 'big.bin') }).catch((e: unknown) => e);
    expect(declared).toBeInstanceOf(Anthropic.APIError);
    expect(declared).toMatchObject({ status: 413, error: { type: 'error', error: { type: 'request_too_large', code: 'FILE_TOO_LARGE' } } });

    const streamed = await chunkedUpload(gw.url, gw.keyA, MAX_BYTES + 64 * 1024);
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { max_bytes: MAX_BYTES } });

    const atLimit = await chunkedUpload(gw.url, gw.keyA, MAX_BYTES);
    expect(atLimit.status).toBe(200);
    expect(JSON.parse(atLimit.body).size_bytes).toBe(MAX_BYTES);
    expect((await a.beta.files.list({ limit: 100 })).data.length).toBe(before + 1);
  });

  it('says what is wrong with a malformed upload (4xx with a stable code)', async () => {
    const json = await call(gw.url, gw.keyA, 'POST', '/v1/files', { file: 'x' });
    expect(json.status).toBe(415);
    expect(json.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const noFile = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-api-key': gw.keyA }, body: (() => { const f = new FormData(); f.append('purpose', 'x'); return f; })() });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { error: { details: unknown } }).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'file' } });
    const badExpiry = await upload(gw.url, gw.keyA, 'e.txt', 'e', { expires_in_seconds: '60' });
    expect(badExpiry.status).toBe(400);
    expect(badExpiry.json.error.details).toEqual({ field: 'expires_in_seconds' });
    const broken = await call(gw.url, gw.keyA, 'POST', '/v1/files', '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc', { 'content-type': 'multipart/form-data; boundary=x' });
    expect(broken.status).toBe(400);
    expect((await a.beta.files.list({ limit: 100 })).data.some((f) => f.filename === 'e.txt' || f.filename === 'a')).toBe(false);
  });

  it('keeps an expiring upload until its time, with expires_at set', async () => {
    const expiring = await a.beta.files.upload({ file: await toFile(Buffer.from('soon'), 'soon.txt'), expires_in_seconds: 3600 });
    expect(Date.parse(expiring.expires_at as string) - Date.parse(expiring.created_at)).toBe(3600_000);
    expect(await (await a.beta.files.download(expiring.id)).text()).toBe('soon');
  });
});
