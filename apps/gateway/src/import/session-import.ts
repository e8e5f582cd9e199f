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
import { createHash } from 'node:crypto';
import { BerthError, ConcurrencyError, ErrorCodes, IllegalStateError, isBerthError, type IdGenerator } from '@berth/core';
import type { AgentRecord, AgentStore, BlobStore, EnvironmentRecord, EnvironmentStore, FileRecord, FileStore } from '@berth/ports';
import { IdempotentImportIds, importFingerprint, type ImportedSession, type SessionUseCases } from '@berth/session-use-cases';
import { z } from 'zod';
import { agentNotFound, type AgentsService } from '../agents/agents.service';
import type { EnvironmentsService } from '../environments/environments.service';
import type { SessionsService } from '../sessions/sessions.service';
import { readSessionArchive, type ReadArchive } from './session-archive-reader';

export type SessionImportDeps = Readonly<{
  agents: AgentsService;
  agentStore: Pick<AgentStore, 'get'>;
  environments: EnvironmentsService;
  environmentStore: Pick<EnvironmentStore, 'get'>;
  sessions: SessionsService;
  useCases: Pick<SessionUseCases, 'import' | 'claimImport'>;
  files: Pick<FileStore, 'insert'>;
  blobs: BlobStore;
  ids: IdGenerator;
  /** The largest upload taken (a larger one is a 413). */
  maxBytes: number;
}>;

/** An agent or environment to run the import on, checked: the caller's own, or one to make (under `id` when given, once). */
type Planned<R, C> = Readonly<{ config: C; make: (id?: string) => Promise<R> }>;

/** Use these of the caller's instead of recreating the archive's agent or environment. */
export type ImportTargets = Readonly<{ agent_id?: string; environment_id?: string }>;

/** An import's Idempotency-Key and what it is bound to (`importFingerprint`). */
type ImportKey = Readonly<{ key: string; subject: string }>;

/** The imported session, the workspace blob it restores, and the output files to record. */
type Made = ImportedSession & Readonly<{ files: readonly FileRecord[] }>;

/** The parts of the archived session, agent and environment an import recreates (as the API rendered them), and the resources it names as left behind. */
const ArchivedSessionSchema = z.object({ title: z.string().max(512).nullable(), metadata: MetadataSchema, resources: z.array(UncarriedResourceSchema).max(MAX_SESSION_RESOURCES).default([]) });
const ArchivedAgentSchema = z.object({ name: z.string().min(1).max(256), metadata: MetadataSchema });
const ArchivedEnvironmentSchema = z.object({ name: z.string().min(1).max(256), description: z.string().max(2048).nullable(), metadata: MetadataSchema, config: z.unknown() });
const AGENT_CONFIG_FIELDS = ['description', 'execution_identity', 'mcp_servers', 'metadata', 'model', 'multiagent', 'skills', 'system', 'tools'] as const;

/** The kernel may still apply the CreateSession (no answer in time, or not visible yet): the workspace blob it names is kept. */
const mayHaveApplied = (error: unknown): boolean => isBerthError(error) && (error.code === ErrorCodes.TIMEOUT || error.code === ErrorCodes.UNAVAILABLE);

/** What an earlier attempt made under `id`, or what `make` makes now; a concurrent attempt making it first (the store's ConcurrencyError) is found instead. */
async function once<R>(id: string | undefined, find: (id: string) => Promise<R | null>, make: (id?: string) => Promise<R>): Promise<R> {
  if (id === undefined) return make();
  const found = await find(id);
  if (found !== null) return found;
  try {
    return await make(id);
  } catch (error) {
    const raced = error instanceof ConcurrencyError ? await find(id) : null;
    if (raced === null) throw error;
    return raced;
  }
}

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
 *
 * With an Idempotency-Key the import is claimed (bound to the archive's digest and the targets)
 * before anything is made, and what it makes is named from the key, so a retry, while the first
 * attempt runs or after it died half-way, makes only what is missing and answers the same session.
 */
export class SessionImport {
  constructor(private readonly d: SessionImportDeps) {}

  /** `declaredBytes`: the upload's Content-Length, when it has one (more than the limit is refused before a byte is read). */
  async import(owner: string, upload: AsyncIterable<Uint8Array>, targets: ImportTargets, declaredBytes?: number, idempotencyKey?: string) {
    if (declaredBytes !== undefined && declaredBytes > this.d.maxBytes) throw new ArchiveRefused('ARCHIVE_TOO_LARGE', `an archive may be at most ${this.d.maxBytes} bytes`, { limit_bytes: this.d.maxBytes });
    const keyed = idempotencyKey === undefined ? undefined : { key: idempotencyKey, hash: createHash('sha256') };
    const read = await readSessionArchive(upload, { blobs: this.d.blobs, blobKey: () => this.d.ids.next('blob'), maxBytes: this.d.maxBytes, hash: keyed?.hash });
    const key = keyed && { key: keyed.key, subject: importFingerprint(keyed.hash.digest('hex'), targets) };
    const outputs = [...read.outputs.values()].map((o) => o.blob_key);
    const workspace = read.workspace_blob === null ? [] : [read.workspace_blob];
    let made: Made;
    try {
      made = await this.create(owner, read, targets, key);
    } catch (error) {
      await Promise.all([...outputs, ...(mayHaveApplied(error) ? [] : workspace)].map((blob) => this.d.blobs.delete(blob)));
      throw error;
    }
    // Under a key another attempt may have made the session, or recorded a file, first: this attempt's copies are dropped.
    await Promise.all(workspace.filter((blob) => blob !== made.workspace_blob).map((blob) => this.d.blobs.delete(blob)));
    for (const file of made.files) {
      try {
        await this.d.files.insert(file);
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        await this.d.blobs.delete(file.blob_key);
      }
    }
    return this.d.sessions.render(made.record);
  }

  private async create(owner: string, read: ReadArchive, targets: ImportTargets, key: ImportKey | undefined): Promise<Made> {
    const { manifest } = read;
    const session = archived(ArchivedSessionSchema, manifest.session, 'session');
    // Everything is checked before the agent or environment is made, so a refusal leaves neither behind.
    const environmentPlan = await this.environmentFor(owner, manifest, targets.environment_id);
    const agentPlan = await this.agentFor(owner, manifest, targets.agent_id);
    refuseConfigIssues(agentConfigIssuesFor(agentPlan.config, manifest.source.harness), 'agent');
    const sessionId = key === undefined ? this.d.ids.next('sesn') : await this.d.useCases.claimImport(owner, key.key, key.subject);
    const environment = await once(key && IdempotentImportIds.environment(owner, key.key), (id) => this.d.environmentStore.get(owner, id), environmentPlan.make);
    const agent = await once(key && IdempotentImportIds.agent(owner, key.key), (id) => this.d.agentStore.get(owner, id), agentPlan.make);
    const files = this.filesOf(owner, sessionId, read, key?.key);
    const imported = await this.d.useCases.import({
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
      idempotency_key: key?.key,
    });
    return { ...imported, files };
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
    return { config, make: (id) => this.d.environments.createFrom(owner, { name: env.name, description: env.description, metadata: env.metadata }, config, id) };
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
    return { config, make: (id) => this.d.agents.createFrom(owner, name, config, id) };
  }

  /** The archive's outputs as files of the new session, with new ids (named from the key, if any), in manifest order. */
  private filesOf(owner: string, sessionId: string, read: ReadArchive, key: string | undefined): FileRecord[] {
    return [...read.outputs.values()].map((o, index) => {
      const mime = mimeTypeOf(o.metadata.filename, o.metadata.mime_type);
      return {
        id: key === undefined ? this.d.ids.next('file') : IdempotentImportIds.file(owner, key, index),
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
