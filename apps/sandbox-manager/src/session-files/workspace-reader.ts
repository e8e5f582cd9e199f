import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { SessionPaths, type WorkspaceEntry, type WorkspaceReadReply, type WorkspaceReadRequest } from '@berth/contracts';
import type { BlobStore, SandboxRuntime, SessionWorkspaces } from '@berth/ports';
import { KEEPALIVE_CMD, SANDBOX_USER, SandboxLabels } from '@berth/sandbox-domain';
import { extract } from 'tar-stream';
import type { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import type { SessionView } from '@berth/sandbox-workflow';

/** A listing stops here (and says it was cut). */
const MAX_ENTRIES = 5000;

const refused = (status: number, code: string, message: string): WorkspaceReadReply => ({ kind: 'refused', status, code, message });

/**
 * Reads a session's `/workspace` for the gateway: an archive of it (or of a directory in it), one
 * file, or a directory listing. The session's running sandbox is read when there is one; otherwise
 * a reader container is started on the session's workspace (no network, the sandbox user, removed
 * right after), since the workspace outlives the sandboxes. Archives and files are staged in the
 * blob store for the gateway to stream; nothing is held whole in memory.
 */
export class WorkspaceReader {
  constructor(
    private readonly deps: Readonly<{
      runtime: SandboxRuntime;
      workspaces: SessionWorkspaces;
      blobs: BlobStore;
      /** The session as the manager knows it (caught up on the journal). */
      view: (sessionId: string) => Promise<SessionView>;
      settings: EnvironmentSettingsReader;
      scopeLabels: Readonly<Record<string, string>>;
    }>,
  ) {}

  async read(request: WorkspaceReadRequest): Promise<WorkspaceReadReply> {
    const relative = posix.normalize(`/${request.path}`).replace(/^\/+/, '');
    if (relative.split('/').includes('..')) return refused(400, 'VALIDATION_ERROR', 'path must stay inside /workspace');
    const path = relative === '' ? SessionPaths.workspace : posix.join(SessionPaths.workspace, relative);
    const state = await this.deps.view(request.session_id);
    if (!state.exists) return refused(404, 'SESSION_NOT_FOUND', 'session not found');
    return this.withContainer(request.session_id, state, async (container) => {
      if (container === null) return request.kind === 'list' && relative === '' ? { kind: 'entries', entries: [], truncated: false } : refused(404, 'WORKSPACE_PATH_NOT_FOUND', 'the session has no workspace yet');
      const archive = await this.deps.runtime.getArchive(container, path);
      if (archive === null) return refused(404, 'WORKSPACE_PATH_NOT_FOUND', `no such path in the workspace: /${relative}`);
      if (request.kind === 'archive') return this.stage(archive);
      if (request.kind === 'list') return list(archive);
      return this.stageFirstFile(archive, relative);
    });
  }

  /** The bound sandbox when it runs, else a reader on the workspace (null: the session has none). */
  private async withContainer<T>(sessionId: string, state: SessionView, use: (container: string | null) => Promise<T>): Promise<T> {
    const bound = state.sandbox === null ? null : await this.deps.runtime.inspect(state.sandbox.sandbox_id);
    if (bound?.running) return use(bound.name);
    const workspace = await this.deps.workspaces.ofSession(sessionId);
    if (workspace === null) return use(null);
    const settings = await this.deps.settings.read(state.owner_id, state.environment_id);
    const reader = await this.deps.runtime.ensureRunning({
      name: `berth-r-${sessionId}-${randomBytes(3).toString('hex')}`,
      image: settings.sandbox.image,
      labels: { ...this.deps.scopeLabels, [SandboxLabels.managed]: 'true', [SandboxLabels.workspace]: workspace.id },
      env: {},
      network: 'none',
      user: SANDBOX_USER,
      workdir: SessionPaths.workspace,
      memoryBytes: 64 * 1024 * 1024,
      nanoCpus: 250_000_000,
      pidsLimit: 16,
      readOnlyRoot: true,
      cmd: KEEPALIVE_CMD,
      mounts: workspace.mounts,
    });
    try {
      return await use(reader.name);
    } finally {
      await this.deps.runtime.remove(reader.name);
    }
  }

  private async stage(content: AsyncIterable<Uint8Array>): Promise<WorkspaceReadReply> {
    const key = `blob_ws_${randomBytes(12).toString('hex')}`;
    const { size } = await this.deps.blobs.put(key, content);
    return { kind: 'staged', blob_key: key, size };
  }

  private async stageFirstFile(archive: Readable, relative: string): Promise<WorkspaceReadReply> {
    const entries = extract();
    archive.on('error', (e) => entries.destroy(e));
    archive.pipe(entries);
    let reply: WorkspaceReadReply = refused(400, 'NOT_A_FILE', `/${relative} is not a regular file`);
    for await (const entry of entries) {
      if (reply.kind === 'refused' && entry.header.type === 'file') reply = await this.stage(entry as AsyncIterable<Uint8Array>);
      else entry.resume();
    }
    return reply;
  }
}

/** The entries right below the archived directory (Docker names them `<dir>/…`). */
async function list(archive: Readable): Promise<WorkspaceReadReply> {
  const entries = extract();
  archive.on('error', (e) => entries.destroy(e));
  archive.pipe(entries);
  const found: WorkspaceEntry[] = [];
  let truncated = false;
  for await (const entry of entries) {
    const parts = entry.header.name.replace(/\/$/, '').split('/');
    const type = entry.header.type === 'directory' ? 'directory' : entry.header.type === 'symlink' ? 'symlink' : entry.header.type === 'file' ? 'file' : null;
    if (parts.length === 2 && type !== null) {
      if (found.length < MAX_ENTRIES) found.push({ path: parts[1], type, size: type === 'file' ? (entry.header.size ?? 0) : 0, modified_at: (entry.header.mtime ?? new Date(0)).toISOString() });
      else truncated = true;
    }
    entry.resume();
  }
  found.sort((a, b) => (a.type === 'directory' ? 0 : 1) - (b.type === 'directory' ? 0 : 1) || a.path.localeCompare(b.path));
  return { kind: 'entries', entries: found, truncated };
}
