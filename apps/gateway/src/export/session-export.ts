import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  HarnessKindSchema,
  SESSION_ARCHIVE_FORMAT,
  SessionArchiveManifestSchema,
  transcriptEntryName,
  type RecordedEvent,
  type SessionArchiveManifest,
  type WorkspaceReadReply,
} from '@berth/contracts';
import { BerthError, ErrorCodes, IllegalStateError, type Clock } from '@berth/core';
import type { BlobStore, FileRecord, FileStore, SessionJournal, TranscriptMirror } from '@berth/ports';
import { pack, type Pack } from 'tar-stream';
import { z } from 'zod';
import type { AgentsService } from '../agents/agents.service';
import type { EnvironmentsService } from '../environments/environments.service';
import type { SessionsService } from '../sessions/sessions.service';
import type { WorkspaceReads } from '../workspace/workspace-reads.port';

export type SessionExportDeps = Readonly<{
  sessions: SessionsService;
  agents: AgentsService;
  environments: EnvironmentsService;
  journal: Pick<SessionJournal, 'readEvents'>;
  transcripts: Pick<TranscriptMirror, 'files'>;
  files: Pick<FileStore, 'list'>;
  blobs: BlobStore;
  workspace: WorkspaceReads;
  clock: Clock;
}>;

/** The harness part of the session's read-model view. */
const HarnessViewSchema = z.object({ kind: HarnessKindSchema, session_id: z.string().nullable() });

/** What an output's metadata says in the archive: the file as the Files API shows it (no owner, no blob key). */
const outputMetadata = (f: FileRecord) => ({ id: f.id, filename: f.filename, mime_type: f.mime_type, size_bytes: f.size_bytes, created_at: f.created_at, sha256: f.sha256, scope: f.scope });

/**
 * Builds one session's archive (layout in `@berth/contracts` session-archive): everything is read
 * and checked before the first byte is sent, so a failure is an error answer, not a cut stream; the
 * outputs and the workspace are streamed from the blob store. Secrets are never read: the session,
 * agent and environment are taken as the API renders them (repository tokens are write-only there).
 */
export class SessionExport {
  constructor(private readonly d: SessionExportDeps) {}

  async prepare(owner: string, sessionId: string): Promise<{ archive: Readable; cleanup: () => Promise<void> }> {
    const record = await this.d.sessions.find(owner, sessionId);
    const turn = record.view['turn'] as { id: string } | null | undefined;
    if (turn) throw new IllegalStateError(ErrorCodes.SESSION_BUSY, 'a turn is active; export the session once it is idle (or paused)', { turn_id: turn.id });
    const harness = HarnessViewSchema.parse(record.view['harness']);
    // The journal as far as the record the turn check read: a later event (a message just sent) waits for the next export.
    const events = (await this.d.journal.readEvents(sessionId)).filter((e) => e.seq <= record.last_seq);
    const [session, agent, environment, transcripts, outputs] = await Promise.all([
      this.d.sessions.get(owner, sessionId),
      this.d.agents.get(owner, record.agent_id, record.agent_version),
      this.d.environments.get(owner, record.environment_id),
      this.d.transcripts.files(sessionId),
      this.outputsOf(owner, sessionId),
    ]);
    const workspace = await this.stagedWorkspace(sessionId);
    const manifest: SessionArchiveManifest = SessionArchiveManifestSchema.parse({
      format: SESSION_ARCHIVE_FORMAT,
      version: 1,
      exported_at: this.d.clock.now().toISOString(),
      source: {
        session_id: sessionId,
        agent: { id: record.agent_id, version: record.agent_version },
        environment_id: record.environment_id,
        harness: harness.kind,
        harness_session_id: harness.session_id,
      },
      session,
      agent,
      environment,
      journal_events: events.length,
      transcripts: transcripts.map((t) => t.path),
      outputs: outputs.map((o) => o.id),
      workspace: workspace !== null,
    });
    const archive = pack();
    const cleanup = async () => {
      if (workspace !== null) await this.d.blobs.delete(workspace.blobKey);
    };
    void this.write(archive, manifest, events, transcripts, outputs, workspace).catch((error: unknown) => archive.destroy(error as Error));
    return { archive: Readable.from(archive), cleanup };
  }

  private async write(
    archive: Pack,
    manifest: SessionArchiveManifest,
    events: readonly RecordedEvent[],
    transcripts: readonly { path: string; data: string }[],
    outputs: readonly FileRecord[],
    workspace: { blobKey: string; size: number } | null,
  ): Promise<void> {
    const text = (name: string, body: string) => new Promise<void>((resolve, reject) => archive.entry({ name, mode: 0o644 }, body, (e) => (e ? reject(e) : resolve())));
    await text('manifest.json', JSON.stringify(manifest, null, 2));
    await text('journal.jsonl', events.map((e) => `${JSON.stringify(e)}\n`).join(''));
    for (const t of transcripts) await text(transcriptEntryName(t.path), t.data);
    for (const o of outputs) {
      await text(`outputs/${o.id}/metadata.json`, JSON.stringify(outputMetadata(o), null, 2));
      await this.blob(archive, `outputs/${o.id}/content`, o.blob_key, o.size_bytes);
    }
    if (workspace !== null) await this.blob(archive, 'workspace.tar', workspace.blobKey, workspace.size);
    archive.finalize();
  }

  private async blob(archive: Pack, name: string, key: string, size: number): Promise<void> {
    const bytes = await this.d.blobs.get(key);
    if (bytes === null) throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `the bytes of ${name} are gone from the blob store`);
    const entry = archive.entry({ name, size, mode: 0o644 });
    await pipeline(bytes, entry);
  }

  private async outputsOf(owner: string, sessionId: string): Promise<FileRecord[]> {
    const all: FileRecord[] = [];
    let page: string | null = null;
    for (;;) {
      const got = await this.d.files.list(owner, { scope_id: sessionId, limit: 100, page });
      all.push(...got.data);
      if (got.next_page === null || got.data.length === 0) return all;
      page = got.next_page;
    }
  }

  /** The workspace as the workspace archive route serves it, staged in the blob store; null when the session has none. */
  private async stagedWorkspace(sessionId: string): Promise<{ blobKey: string; size: number } | null> {
    const reply: WorkspaceReadReply = await this.d.workspace.read({ session_id: sessionId, path: '', kind: 'archive' });
    if (reply.kind === 'staged') return { blobKey: reply.blob_key, size: reply.size };
    if (reply.kind === 'refused' && reply.status === 404) return null;
    if (reply.kind === 'refused') throw new BerthError(reply.code, reply.status, reply.message);
    throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the sandbox-manager answered the workspace read with something else');
  }
}
