import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { WorkspaceReadReply, WorkspaceReadRequest } from '@berth/contracts';
import type { BerthStore } from '@berth/ports';
import { pack } from 'tar-stream';

/** The workspace every session of the browser test has, and the output its turns write. */
export const WORKSPACE = { 'README.md': '# hello from the workspace\n', 'src/main.ts': 'export const answer = 42;\n' } as const;
export const OUTPUT = { name: 'report.txt', content: 'the report the agent wrote\n' } as const;

/**
 * Plays the sandbox-manager's two file duties for browser tests, on the gateway's own store:
 * reading a session's workspace (a fixed tree, staged in the blob store as the manager does) and
 * capturing a turn's output into a session-scoped file.
 */
export class ScriptedWorkspace {
  constructor(private readonly store: Pick<BerthStore, 'blobs' | 'files' | 'sessions'>) {}

  async read(request: WorkspaceReadRequest): Promise<WorkspaceReadReply> {
    const dir = request.path.replace(/^\/+|\/+$/g, '');
    const files = Object.entries(WORKSPACE).filter(([p]) => dir === '' || p.startsWith(`${dir}/`) || p === dir);
    if (files.length === 0) return { kind: 'refused', status: 404, code: 'WORKSPACE_PATH_NOT_FOUND', message: `no such path in the workspace: /${dir}` };
    if (request.kind === 'list') {
      const below = files.map(([p]) => (dir ? p.slice(dir.length + 1) : p));
      const names = [...new Set(below.map((p) => p.split('/')[0]))];
      return {
        kind: 'entries',
        truncated: false,
        entries: names.map((name) => {
          const full = dir ? `${dir}/${name}` : name;
          const content = (WORKSPACE as Record<string, string>)[full];
          return { path: name, type: content === undefined ? 'directory' : 'file', size: content?.length ?? 0, modified_at: new Date(0).toISOString() };
        }),
      };
    }
    if (request.kind === 'file') return this.stage([Buffer.from(files[0][1])]);
    const archive = pack();
    for (const [path, content] of files) archive.entry({ name: `workspace/${path}` }, content);
    archive.finalize();
    return this.stage(Readable.from(archive));
  }

  /** What the manager captures after a turn: the output, as a file of the session's owner. */
  async capture(sessionId: string): Promise<void> {
    const session = await this.store.sessions.getById(sessionId);
    if (session === null) return;
    const key = `blob_${randomBytes(8).toString('hex')}`;
    await this.store.blobs.put(key, Readable.from([Buffer.from(OUTPUT.content)]));
    await this.store.files.put({
      id: `file_out_${createHash('sha256').update(sessionId).digest('hex').slice(0, 20)}`,
      owner_id: session.owner_id,
      filename: OUTPUT.name,
      mime_type: 'text/plain',
      size_bytes: OUTPUT.content.length,
      created_at: new Date().toISOString(),
      expires_at: null,
      downloadable: true,
      scope: { type: 'session', id: sessionId },
      blob_key: key,
      sha256: createHash('sha256').update(OUTPUT.content).digest('hex'),
      output: { path: OUTPUT.name, fingerprint: 'scripted' },
      deleted: false,
    });
  }

  private async stage(content: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<WorkspaceReadReply> {
    const key = `blob_ws_${randomBytes(8).toString('hex')}`;
    const { size } = await this.store.blobs.put(key, (async function* () {
      yield* content;
    })());
    return { kind: 'staged', blob_key: key, size };
  }
}
