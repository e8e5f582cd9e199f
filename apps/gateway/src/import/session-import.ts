import {
  agentConfigIssues,
  agentConfigIssuesFor,
  ArchiveRefused,
  fileNameOf,
  MAX_SESSION_RESOURCES,
  MetadataSchema,
  mimeTypeOf,
  permissionModeOf,
  readAgentConfig,
  readEnvironmentConfig,
  refuseConfigIssues,
  UncarriedResourceSchema,
  type AgentConfig,
  type EnvironmentConfig,
  type SessionArchiveManifest,
} from '@berth/contracts';
import { BerthError, IllegalStateError, type IdGenerator } from '@berth/core';
import type { AgentRecord, AgentStore, BlobStore, EnvironmentRecord, FileRecord, FileStore, SessionRecord } from '@berth/ports';
import type { SessionUseCases } from '@berth/session-use-cases';
import { z } from 'zod';
import { agentNotFound, type AgentsService } from '../agents/agents.service';
import type { EnvironmentsService } from '../environments/environments.service';
import type { SessionsService } from '../sessions/sessions.service';
import { readSessionArchive, type ReadArchive } from './session-archive-reader';

export type SessionImportDeps = Readonly<{
  agents: AgentsService;
  agentStore: Pick<AgentStore, 'get'>;
  environments: EnvironmentsService;
  sessions: SessionsService;
  useCases: Pick<SessionUseCases, 'import'>;
  files: Pick<FileStore, 'put'>;
  blobs: BlobStore;
  ids: IdGenerator;
  /** The largest upload taken (a larger one is a 413). */
  maxBytes: number;
}>;

/** An agent or environment to run the import on, checked: the caller's own, or one to make. */
type Planned<R, C> = Readonly<{ config: C; make: () => Promise<R> }>;

/** Use these of the caller's instead of recreating the archive's agent or environment. */
export type ImportTargets = Readonly<{ agent_id?: string; environment_id?: string }>;

/** The parts of the archived session, agent and environment an import recreates (as the API rendered them), and the resources it names as left behind. */
const ArchivedSessionSchema = z.object({ title: z.string().max(512).nullable(), metadata: MetadataSchema, resources: z.array(UncarriedResourceSchema).max(MAX_SESSION_RESOURCES).default([]) });
const ArchivedAgentSchema = z.object({ name: z.string().min(1).max(256), metadata: MetadataSchema });
const ArchivedEnvironmentSchema = z.object({ name: z.string().min(1).max(256), description: z.string().max(2048).nullable(), metadata: MetadataSchema, config: z.unknown() });
const AGENT_CONFIG_FIELDS = ['description', 'execution_identity', 'mcp_servers', 'metadata', 'model', 'multiagent', 'skills', 'system', 'tools'] as const;

function archived<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [field, ...issue.path.map(String)].join('.');
  throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `manifest.json: ${path}: ${issue.message}`, { field: path });
}

/**
 * `POST /v1/sessions/import`: an exported session recreated under the caller, with new ids. The
 * archive is read and checked whole first (outputs and the workspace staged in the blob store);
 * then the agent version and environment are recreated from the archive (or the caller's named
 * ones are used, on the same harness), the session is created through the kernel with its
 * transcript restored and `berth.session_imported` naming the source ids, and its output files
 * are recorded under their new ids. Its first sandbox gets the archived workspace. The session's
 * resources are not recreated (a file resource's file is not in the archive, a repository's token
 * never leaves its install): the import names each in `resources_not_carried`.
 */
export class SessionImport {
  constructor(private readonly d: SessionImportDeps) {}

  /** `declaredBytes`: the upload's Content-Length, when it has one (more than the limit is refused before a byte is read). */
  async import(owner: string, upload: AsyncIterable<Uint8Array>, targets: ImportTargets, declaredBytes?: number) {
    if (declaredBytes !== undefined && declaredBytes > this.d.maxBytes) throw new ArchiveRefused('ARCHIVE_TOO_LARGE', `an archive may be at most ${this.d.maxBytes} bytes`, { limit_bytes: this.d.maxBytes });
    const read = await readSessionArchive(upload, { blobs: this.d.blobs, blobKey: () => this.d.ids.next('blob'), maxBytes: this.d.maxBytes });
    const staged = [...[...read.outputs.values()].map((o) => o.blob_key), ...(read.workspace_blob === null ? [] : [read.workspace_blob])];
    let created: Readonly<{ record: SessionRecord; files: readonly FileRecord[] }>;
    try {
      created = await this.create(owner, read, targets);
    } catch (error) {
      await Promise.all(staged.map((key) => this.d.blobs.delete(key)));
      throw error;
    }
    for (const file of created.files) await this.d.files.put(file);
    return this.d.sessions.render(created.record);
  }

  private async create(owner: string, read: ReadArchive, targets: ImportTargets): Promise<Readonly<{ record: SessionRecord; files: readonly FileRecord[] }>> {
    const { manifest } = read;
    const session = archived(ArchivedSessionSchema, manifest.session, 'session');
    // Everything is checked before the agent or environment is made, so a refusal leaves neither behind.
    const environmentPlan = await this.environmentFor(owner, manifest, targets.environment_id);
    const agentPlan = await this.agentFor(owner, manifest, targets.agent_id);
    refuseConfigIssues(agentConfigIssuesFor(agentPlan.config, manifest.source.harness), 'agent');
    const environment = await environmentPlan.make();
    const agent = await agentPlan.make();
    const sessionId = this.d.ids.next('sesn');
    const files = this.filesOf(owner, sessionId, read);
    const record = await this.d.useCases.import({
      owner,
      session_id: sessionId,
      agent: { id: agent.id, version: agent.version },
      environment_id: environment.id,
      harness: manifest.source.harness,
      permission_mode: permissionModeOf(agentPlan.config),
      title: session.title,
      metadata: session.metadata,
      transcripts: read.transcripts,
      origin: {
        session_id: manifest.source.session_id,
        agent: manifest.source.agent,
        environment_id: manifest.source.environment_id,
        exported_at: manifest.exported_at,
        journal_events: read.journal_events,
        harness_session_id: manifest.source.harness_session_id,
        files: [...read.outputs.keys()].map((from, i) => ({ from, to: files[i].id })),
        workspace_blob: read.workspace_blob,
        resources_not_carried: session.resources,
      },
    });
    return { record, files };
  }

  /** The caller's environment (on the archive's harness), or the archived one, checked, to be recreated. */
  private async environmentFor(owner: string, manifest: SessionArchiveManifest, id: string | undefined): Promise<Planned<EnvironmentRecord, EnvironmentConfig>> {
    if (id !== undefined) {
      const env = await this.d.environments.find(owner, id);
      if (env.archived_at !== null) throw new IllegalStateError('ENVIRONMENT_ARCHIVED', 'the environment is archived');
      const config = readEnvironmentConfig(env.config);
      this.sameHarness(config, manifest);
      return { config, make: async () => env };
    }
    const env = archived(ArchivedEnvironmentSchema, manifest.environment, 'environment');
    let config: EnvironmentConfig;
    try {
      config = readEnvironmentConfig(env.config);
    } catch (error) {
      throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `manifest.json: environment.config: ${error instanceof z.ZodError ? error.issues[0].message : String(error)}`, { field: 'environment.config' });
    }
    this.sameHarness(config, manifest);
    this.d.environments.refuseUnsupported(config);
    return { config, make: () => this.d.environments.createFrom(owner, { name: env.name, description: env.description, metadata: env.metadata }, config) };
  }

  private sameHarness(config: EnvironmentConfig, manifest: SessionArchiveManifest): void {
    if (config.harness === manifest.source.harness) return;
    throw new BerthError('IMPORT_HARNESS_MISMATCH', 400, `the archived session ran on ${manifest.source.harness}; the environment runs ${config.harness}, which cannot resume its conversation`, {
      harness: manifest.source.harness,
    });
  }

  /** The latest version of the caller's agent, or the archived agent version, checked, to be recreated as a new agent. */
  private async agentFor(owner: string, manifest: SessionArchiveManifest, id: string | undefined): Promise<Planned<AgentRecord, AgentConfig>> {
    if (id !== undefined) {
      const agent = await this.d.agentStore.get(owner, id);
      if (!agent) throw agentNotFound();
      if (agent.archived_at !== null) throw new IllegalStateError('AGENT_ARCHIVED', 'the agent is archived');
      return { config: readAgentConfig(agent.config), make: async () => agent };
    }
    const { name } = archived(ArchivedAgentSchema, manifest.agent, 'agent');
    let config: AgentConfig;
    try {
      config = readAgentConfig(Object.fromEntries(AGENT_CONFIG_FIELDS.map((field) => [field, manifest.agent[field]])));
    } catch (error) {
      const issue = error instanceof z.ZodError ? error.issues[0] : null;
      const field = ['agent', ...(issue?.path.map(String) ?? [])].join('.');
      throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `manifest.json: ${field}: ${issue?.message ?? String(error)}`, { field });
    }
    refuseConfigIssues(agentConfigIssues(config), 'agent');
    return { config, make: () => this.d.agents.createFrom(owner, name, config) };
  }

  /** The archive's outputs as files of the new session, with new ids, in manifest order. */
  private filesOf(owner: string, sessionId: string, read: ReadArchive): FileRecord[] {
    return [...read.outputs.values()].map((o) => {
      const mime = mimeTypeOf(o.metadata.filename, o.metadata.mime_type);
      return {
        id: this.d.ids.next('file'),
        owner_id: owner,
        filename: fileNameOf(o.metadata.filename, mime),
        mime_type: mime,
        size_bytes: o.size,
        created_at: o.metadata.created_at,
        expires_at: null,
        downloadable: true,
        scope: { type: 'session', id: sessionId },
        blob_key: o.blob_key,
        sha256: o.sha256,
        output: null,
        deleted: false,
      };
    });
  }
}
