import type { CommandData, CommandType, ImportOrigin, RecordedEvent } from '@berth/contracts';
import { BerthError, ErrorCodes } from '@berth/core';
import { FixedClock, SequentialIds } from '@berth/core/testing';
import type { IdempotencyKeys, IdempotencyRecord, SessionReadModel, SessionRecord, TranscriptMirror } from '@berth/ports';
import { importFingerprint } from './idempotent-ids';
import type { AcceptedOutcome, SessionCommandSender } from './session-commands';
import { SessionUseCases, type ImportSessionInput } from './session-use-cases';

const OWNER = 'owner_1';
const AT = '2026-01-01T00:00:00.000Z';

class MapIdempotencyKeys implements IdempotencyKeys {
  private readonly rows = new Map<string, IdempotencyRecord>();
  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const at = `${record.owner_id}\u0000${record.key}`;
    if (!this.rows.has(at)) this.rows.set(at, record);
    return this.rows.get(at) as IdempotencyRecord;
  }
  async get(ownerId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.rows.get(`${ownerId}\u0000${key}`) ?? null;
  }
}

/**
 * The kernel as the use cases see it through their ports: a command id is applied once, committing
 * the session's events and read-model row together; a second send of it is answered as applied
 * (the stores take the same commit again as a no-op), so concurrent senders all hear success.
 * `loseReplies`: the command is applied, its answer never comes back.
 */
class OnceKernel implements SessionCommandSender {
  readonly sent: { sessionId: string; type: CommandType; commandId?: string }[] = [];
  readonly rows = new Map<string, SessionRecord>();
  readonly journal = new Map<string, RecordedEvent[]>();
  loseReplies = false;

  async send<T extends CommandType>(actor: string, sessionId: string, type: T, data: CommandData<T>, commandId?: string): Promise<AcceptedOutcome> {
    this.sent.push({ sessionId, type, commandId });
    // The bus is asynchronous: a concurrent sender gets here before this command is applied.
    await Promise.resolve();
    if (!this.rows.has(sessionId)) {
      const origin = (data as CommandData<'CreateSession'>).import as ImportOrigin;
      const imported = { type: 'SessionImported', data: { from: origin }, id: 'sevt_1', session_id: sessionId, seq: 1, schema_version: 1, command_id: commandId ?? 'cmd', occurred_at: AT };
      this.journal.set(sessionId, [imported as RecordedEvent]);
      this.rows.set(sessionId, { id: sessionId, owner_id: actor, agent_id: 'agent_1', agent_version: 1, environment_id: 'env_1', title: null, metadata: {}, status: 'idle', view: {}, last_seq: 1, created_at: AT, updated_at: AT, archived_at: null, deleted: false });
    }
    if (this.loseReplies) throw new BerthError(ErrorCodes.TIMEOUT, 504, 'the session kernel did not answer');
    return { ok: true, command_id: commandId ?? 'cmd', session_id: sessionId, events: [{ id: 'sevt_1', seq: 1, type: 'SessionImported' }], duplicate: false, last_seq: 1 };
  }
}

function platform() {
  const kernel = new OnceKernel();
  const sessions: Pick<SessionReadModel, 'get'> = { get: async (owner, id) => (kernel.rows.get(id)?.owner_id === owner ? (kernel.rows.get(id) ?? null) : null) };
  const transcripts: Pick<TranscriptMirror, 'files' | 'append'> = { files: async () => [], append: async () => undefined };
  const useCases = new SessionUseCases({
    sessions: sessions as SessionReadModel,
    idempotency: new MapIdempotencyKeys(),
    journal: {
      readEvents: async (id, query) => (kernel.journal.get(id) ?? []).filter((e) => query?.types === undefined || query.types.includes(e.type)),
      eventsOfCommand: async () => [],
    },
    commands: kernel,
    probe: { probe: async () => ({ exists: false, running: false, expiry_known: true, expired: false }) },
    secrets: { put: async () => undefined, get: async () => null, delete: async () => undefined },
    transcripts,
    box: {
      seal: () => {
        throw new Error('an import seals nothing');
      },
      open: () => {
        throw new Error('an import seals nothing');
      },
    },
    clock: new FixedClock(new Date(AT)),
    ids: new SequentialIds(),
  });
  return { useCases, kernel };
}

const SUBJECT = importFingerprint('a'.repeat(64), {});

const origin = (workspaceBlob: string): ImportOrigin => ({
  session_id: 'sesn_source',
  agent: { id: 'agent_source', version: 3 },
  environment_id: 'env_source',
  exported_at: '2025-12-31T00:00:00.000Z',
  journal_events: 7,
  harness_session_id: 'conv-1',
  files: [],
  workspace_blob: workspaceBlob,
  resources_not_carried: [],
});

/** One attempt's import: each attempt stages its own copy of the workspace (`workspaceBlob`). */
const attempt = (sessionId: string, workspaceBlob: string): ImportSessionInput => ({
  owner: OWNER,
  session_id: sessionId,
  agent: { id: 'agent_1', version: 1 },
  environment_id: 'env_1',
  harness: 'claude-code',
  permission_mode: 'always_allow',
  title: 'imported',
  metadata: {},
  transcripts: [{ path: '/home/agent/.claude/projects/p/c.jsonl', data: '{"turn":1}\n' }],
  origin: origin(workspaceBlob),
  idempotency_key: 'imp-1',
});

describe('claimImport: an import Idempotency-Key', () => {
  it('answers the same session id for the same owner, key and subject, concurrent first claims included', async () => {
    const { useCases } = platform();
    const first = await useCases.claimImport(OWNER, 'imp-1', SUBJECT);
    expect(await useCases.claimImport(OWNER, 'imp-1', SUBJECT)).toBe(first);
    const [a, b] = await Promise.all([1, 2].map(() => useCases.claimImport(OWNER, 'imp-2', SUBJECT)));
    expect(a).toBe(b);
    expect(a).not.toBe(first);
  });

  it('is 409 IDEMPOTENCY_KEY_CONFLICT for another archive or targets, as a create key reused for another agent is', async () => {
    const { useCases } = platform();
    await useCases.claimImport(OWNER, 'imp-1', SUBJECT);
    for (const other of [importFingerprint('b'.repeat(64), {}), importFingerprint('a'.repeat(64), { agent_id: 'agent_mine' })]) {
      const refusal = await useCases.claimImport(OWNER, 'imp-1', other).catch((e: unknown) => e);
      expect(refusal).toMatchObject({ code: 'IDEMPOTENCY_KEY_CONFLICT', status: 409 });
      expect((refusal as Error).message).toBe('this Idempotency-Key was already used to import another archive, or onto another agent or environment');
    }
  });

  it('is unrelated to another owner’s identical key and to a create under the same key', async () => {
    const { useCases } = platform();
    const mine = await useCases.claimImport(OWNER, 'imp-1', SUBJECT);
    expect(await useCases.claimImport('owner_2', 'imp-1', SUBJECT)).not.toBe(mine);
    // A create key is claimed bound to its agent id: the same string as an import key holds nothing of the import's.
    const created = await useCases.create({
      owner: OWNER,
      agent: { id: 'agent_1', version: 1 },
      environment_id: 'env_1',
      harness: 'claude-code',
      permission_mode: 'always_allow',
      title: null,
      metadata: {},
      initial_messages: [],
      idempotency_key: 'imp-1',
    });
    expect(created.id).not.toBe(mine);
    expect(await useCases.claimImport(OWNER, 'imp-1', SUBJECT)).toBe(mine);
  });
});

describe('import under an Idempotency-Key', () => {
  it('a retry answers the session made without a second command, naming the workspace blob the session took', async () => {
    const { useCases, kernel } = platform();
    const id = await useCases.claimImport(OWNER, 'imp-1', SUBJECT);
    const first = await useCases.import(attempt(id, 'blob_1'));
    expect(first).toMatchObject({ record: { id }, workspace_blob: 'blob_1' });
    expect(await useCases.import(attempt(id, 'blob_2'))).toEqual(first);
    expect(kernel.sent).toHaveLength(1);
  });

  it('a retry after an attempt whose answer was lost answers that attempt’s session and blob', async () => {
    const { useCases, kernel } = platform();
    const id = await useCases.claimImport(OWNER, 'imp-1', SUBJECT);
    kernel.loseReplies = true;
    await expect(useCases.import(attempt(id, 'blob_1'))).rejects.toMatchObject({ code: 'TIMEOUT' });
    kernel.loseReplies = false;
    expect(await useCases.import(attempt(id, 'blob_2'))).toMatchObject({ record: { id }, workspace_blob: 'blob_1' });
    expect(kernel.sent).toHaveLength(1);
  });

  it('concurrent attempts send one command id, and both hear the blob the session took (each hears "applied")', async () => {
    const { useCases, kernel } = platform();
    const id = await useCases.claimImport(OWNER, 'imp-1', SUBJECT);
    const answers = await Promise.all([attempt(id, 'blob_1'), attempt(id, 'blob_2')].map((i) => useCases.import(i)));
    expect(kernel.sent.map((c) => [c.sessionId, c.type])).toEqual([
      [id, 'CreateSession'],
      [id, 'CreateSession'],
    ]);
    expect(new Set(kernel.sent.map((c) => c.commandId)).size).toBe(1);
    expect(answers.map((a) => a.workspace_blob)).toEqual(['blob_1', 'blob_1']);
  });

  it('without a key, each import is sent under a command id of its own', async () => {
    const { useCases, kernel } = platform();
    await useCases.import({ ...attempt('sesn_a', 'blob_1'), idempotency_key: undefined });
    await useCases.import({ ...attempt('sesn_b', 'blob_2'), idempotency_key: undefined });
    expect(kernel.sent.map((c) => c.commandId)).toEqual([undefined, undefined]);
  });
});
