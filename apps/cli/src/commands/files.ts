import { createWriteStream, openAsBlob } from 'node:fs';
import { basename, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import type { ApiClient } from '../api/client';
import { intOption } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

export type FileMetadata = {
  id: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
  created_at: string;
  expires_at?: string | null;
  scope?: { type: string; id: string } | null;
};

export const fileOutput = (f: FileMetadata): Output => ({
  json: f,
  human: details([
    ['id', f.id],
    ['filename', f.filename],
    ['type', f.mime_type],
    ['size', `${f.size_bytes} bytes`],
    ['created', f.created_at],
    ['expires', f.expires_at ?? undefined],
    ['scope', f.scope ? `${f.scope.type} ${f.scope.id}` : undefined],
  ]),
});

/** Uploads a file from disk: streamed from the file, never read whole into memory. */
export async function uploadFile(api: ApiClient, path: string, expiresInSeconds?: number): Promise<FileMetadata> {
  let blob: Blob;
  try {
    blob = await openAsBlob(path);
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as Error).message}`);
  }
  const form = new FormData();
  if (expiresInSeconds !== undefined) form.append('expires_in_seconds', String(expiresInSeconds));
  form.append('file', blob, basename(path));
  return (await (await api.raw('POST', '/v1/files', { body: form })).json()) as FileMetadata;
}

export const fileCommands: readonly Command[] = [
  {
    name: ['files', 'upload'],
    args: ['path'],
    options: { 'expires-in': { type: 'string', help: 'seconds until the file expires (3600–7776000)' } },
    summary: 'upload a file (to mount into sessions)',
    run: async ({ api }, a, o) => fileOutput(await uploadFile(api, a.path, intOption(o, 'expires-in', 1))),
  },
  {
    name: ['files', 'list'],
    args: [],
    options: {
      session: { type: 'string', help: "only this session's files (its outputs)" },
      limit: { type: 'string', help: 'page size' },
    },
    summary: 'list files',
    run: async ({ api }, _a, o) => {
      const page = await api.request<{ data: FileMetadata[] }>('GET', '/v1/files', { query: { scope_id: str(o, 'session'), limit: intOption(o, 'limit', 1) } });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (f) => f.id },
          { header: 'filename', value: (f) => f.filename },
          { header: 'size', value: (f) => String(f.size_bytes) },
          { header: 'created', value: (f) => f.created_at },
          { header: 'session', value: (f) => display(f.scope?.id) },
        ]),
      };
    },
  },
  {
    name: ['files', 'get'],
    args: ['file'],
    options: {},
    summary: "show a file's metadata",
    run: async ({ api }, a) => fileOutput(await api.request<FileMetadata>('GET', `/v1/files/${a.file}`)),
  },
  {
    name: ['files', 'download'],
    args: ['file'],
    options: { output: { type: 'string', short: 'o', help: 'where to write it (default: its name, in this directory; - for stdout)' } },
    summary: "download a file's content",
    run: async ({ api, io }, a, o) => {
      const output = str(o, 'output');
      const target = output ?? basename((await api.request<FileMetadata>('GET', `/v1/files/${a.file}`)).filename);
      const res = await api.raw('GET', `/v1/files/${a.file}/content`);
      const body = Readable.fromWeb(res.body as WebReadableStream);
      if (target === '-') {
        await pipeline(body, process.stdout, { end: false });
        return;
      }
      await pipeline(body, createWriteStream(target));
      io.err(`wrote ${resolve(target)}`);
      return { json: { id: a.file, path: resolve(target) }, human: resolve(target) };
    },
  },
  {
    name: ['files', 'delete'],
    args: ['file'],
    options: {},
    summary: 'delete a file',
    run: async ({ api }, a) => {
      const res = await api.request<unknown>('DELETE', `/v1/files/${a.file}`);
      return { json: res, human: `deleted ${a.file}` };
    },
  },
];
