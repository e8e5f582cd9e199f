import { BerthError, ErrorCodes, IllegalStateError, NotFoundError, type Clock, type IdGenerator } from '@berth/core';
import { jsonBytes, PayloadLimits, sessionSecretAad, toPublicEvent, type CommandData, type ContentBlock, type HarnessKind, type ImportOrigin, type PermissionMode, type PublicEvent, type SessionResource, type ToolResultContent } from '@berth/contracts';
import type { IdempotencyKeys, SecretBox, SessionJournal, SessionReadModel, SessionRecord, SessionSecrets, TranscriptMirror } from '@berth/ports';
import { boundLeaseExpired, DEFAULT_REBUILD_WAIT, nextRebuildWaitStep, type RebuildWaitPolicy, type SessionView } from '@berth/session-domain';
import { cutTranscripts } from './fork-transcripts';
import { batchFingerprint, eventsKeySlot, IdempotentCommandIds, importKeySlot } from './idempotent-ids';
import { recoverResult, type RecoverResult } from './recover-result';
import { NO_SANDBOX, type ProbeTarget, type SandboxProbe } from './sandbox-probe.port';
import type { AcceptedOutcome, SessionCommandSender } from './session-commands';

export const sessionNotFound = () => new NotFoundError('session not found', 'SESSION_NOT_FOUND');

export type SessionUseCasesDeps = Readonly<{
  sessions: SessionReadModel;
  idempotency: IdempotencyKeys;
  /** Echoes read back what a command recorded; a recover's decision is read from its events. */
  journal: Pick<SessionJournal, 'eventsOfCommand' | 'readEvents'>;
  commands: SessionCommandSender;
  probe: SandboxProbe;
  /** Repository tokens kept beside the journal (never in it), sealed by `box`: a deleted session's or resource's go. */
  secrets: SessionSecrets;
  /** Harness transcript mirrors: a fork gets its origin's, cut at the turn it forks from. */
  transcripts: Pick<TranscriptMirror, 'files' | 'append'>;
  /** Seals repository tokens before they are stored (without a server key: 503 SECRETS_NOT_CONFIGURED, nothing sent). */
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  sleep?: (ms: number) => Promise<void>;
  /** How long a write waits for the read model to show what the kernel just committed. Default 2 s. */
  projectionWaitMs?: number;
  /** Polling of the bounded wait for a rebuilt sandbox (its budget is the caller's). */
  rebuildPollMs?: number;
}>;

/** A create, its agent and environment already resolved by the caller. */
export type CreateSessionInput = Readonly<{
  owner: string;
  agent: Readonly<{ id: string; version: number }>;
  environment_id: string;
  harness: HarnessKind;
  permission_mode: PermissionMode;
  title: string | null;
  metadata: Readonly<Record<string, string>>;
  initial_messages: readonly (readonly ContentBlock[])[];
  /** Files and repositories to mount, resolved by the caller (ids, mount paths), each with its token if any. */
  resources?: readonly ResourceToAttach[];
  /** Vaults the egress injects credentials from, checked by the caller (the owner's, not archived). */
  vault_ids?: readonly string[];
  idempotency_key?: string;
}>;

/** A resource as the journal records it, and the token a repository is cloned with (kept in the secrets, never in an event). */
export type ResourceToAttach = Readonly<{ resource: SessionResource; token: string | null }>;

/**
 * An archived session recreated here: its id (minted by the caller, who scoped its output files to
 * it), the caller's agent version and environment it runs on, the transcript files to restore and
 * where it came from.
 */
export type ImportSessionInput = Readonly<{
  owner: string;
  session_id: string;
  agent: Readonly<{ id: string; version: number }>;
  environment_id: string;
  harness: HarnessKind;
  permission_mode: PermissionMode;
  title: string | null;
  metadata: Readonly<Record<string, string>>;
  transcripts: readonly Readonly<{ path: string; data: string }>[];
  origin: ImportOrigin;
  /** Claimed first (`claimImport`, whose session id this is): a retry sends the same CreateSession command. */
  idempotency_key?: string;
}>;

/**
 * The imported session and the workspace blob it restores from: this attempt's, or, under an
 * Idempotency-Key, an earlier or concurrent attempt's (then this attempt's copy is not needed).
 */
export type ImportedSession = Readonly<{ record: SessionRecord; workspace_blob: string | null }>;

/** What every CreateSession carries, a created or an imported session's. */
const createSessionBasics = (owner: string, input: CreateSessionInput | ImportSessionInput) => ({
  owner_id: owner,
  agent: input.agent,
  environment_id: input.environment_id,
  harness: input.harness,
  title: input.title,
  metadata: input.metadata,
  idempotency_key: input.idempotency_key ?? null,
  permission_mode: input.permission_mode,
});

/** The turn a fork continues from: its `user.message` id or seq; neither: the latest completed turn. */
export type ForkAt = Readonly<{ event_id?: string; seq?: number }>;

export type SessionPatch = Readonly<{ title?: string | null; metadata?: Readonly<Record<string, string | null>> | null }>;

/** What `POST …/events` accepts. */
export type SendableEvent =
  | Readonly<{ type: 'user.message'; content: readonly ContentBlock[] }>
  | Readonly<{ type: 'user.interrupt'; session_thread_id?: string | null }>
  | Readonly<{ type: 'user.tool_confirmation'; tool_use_id: string; result: 'allow' | 'deny'; deny_message?: string | null; session_thread_id?: string | null }>
  | Readonly<{ type: 'user.custom_tool_result'; custom_tool_use_id: string; content?: ToolResultContent; is_error?: boolean | null; session_thread_id?: string | null }>;

export type RecoverAnswer = Readonly<{
  record: SessionRecord;
  recover: RecoverResult;
  /** Present when the caller asked to wait for the rebuilt sandbox: how the wait ended. */
  rebuild?: RebuildWaitEnd;
}>;

export type RebuildWaitEnd = 'ready' | 'terminal' | 'budget_exhausted';

/** The kernel's view as the read model stores it (written by `deriveSessionView`). */
const viewOf = (record: SessionRecord): SessionView => record.view as unknown as SessionView;

/** The sandbox binding the kernel's view records (absent or malformed → none). */
function probeTarget(record: SessionRecord): ProbeTarget {
  const sandbox = viewOf(record).sandbox;
  const bound = sandbox !== null && typeof sandbox === 'object' && typeof sandbox.generation === 'number' ? { generation: sandbox.generation, expires_at: sandbox.expires_at ?? null } : null;
  return { sessionId: record.id, sandbox: bound };
}

const tooLarge = (type: string, bytes: number) =>
  new BerthError(
    ErrorCodes.PAYLOAD_TOO_LARGE,
    413,
    `a ${type}'s content may be at most ${PayloadLimits.userMessageBytes} bytes of JSON (this one is ${bytes}); send a large document as a file instead`,
    { limit_bytes: PayloadLimits.userMessageBytes, bytes },
  );

/**
 * The session use cases behind the HTTP API: each checks the caller's ownership, turns the write
 * into kernel commands, and answers from the read model once it shows the commit. The rules the
 * AstraBox seed pins live here (see docs/seed-map.md): idempotent create and sends, the recover
 * before a message to a sandbox whose lease is past, the bounded wait for a rebuilt sandbox.
 */
export class SessionUseCases {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly projectionWaitMs: number;

  constructor(private readonly d: SessionUseCasesDeps) {
    this.sleep = d.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.projectionWaitMs = d.projectionWaitMs ?? 2_000;
  }

  /** The caller's live session, or 404 (another owner's id and a deleted session look the same). */
  async find(owner: string, id: string): Promise<SessionRecord> {
    const record = await this.d.sessions.get(owner, id);
    if (!record || record.deleted) throw sessionNotFound();
    return record;
  }

  /**
   * Idempotent on (owner, key): the key is bound to the agent, so the same key and agent answer
   * the session already made without a second command (concurrent retries included), another
   * agent is IDEMPOTENCY_KEY_CONFLICT. A retry after a half-done first attempt re-sends the same
   * command ids, so the kernel applies the creation and each initial message once.
   */
  async create(input: CreateSessionInput): Promise<SessionRecord> {
    const { owner } = input;
    const key = input.idempotency_key;
    let sessionId = this.d.ids.next('sesn');
    if (key !== undefined) {
      sessionId = await this.claim(owner, key, input.agent.id, sessionId, 'this Idempotency-Key was already used to create a session for another agent');
      const existing = await this.d.sessions.get(owner, sessionId);
      if (existing) return existing;
    }
    for (const content of input.initial_messages) this.checkMessageSize('user.message', content);
    const resources = input.resources ?? [];
    const sealed = resources.flatMap(({ resource, token }) => (token === null ? [] : [{ id: resource.id, secret: this.seal(sessionId, resource.id, token) }]));
    for (const { id, secret } of sealed) await this.d.secrets.put(sessionId, id, secret);
    const baseId = key !== undefined ? IdempotentCommandIds.create(owner, key) : undefined;
    const outcome = await this.d.commands.send(
      owner,
      sessionId,
      'CreateSession',
      {
        ...createSessionBasics(owner, input),
        ...(resources.length > 0 ? { resources: resources.map((r) => r.resource) } : {}),
        ...(input.vault_ids !== undefined && input.vault_ids.length > 0 ? { vault_ids: [...input.vault_ids] } : {}),
      },
      baseId,
    );
    let lastSeq = outcome.last_seq;
    for (const [index, content] of input.initial_messages.entries()) {
      const sent = await this.d.commands.send(owner, sessionId, 'SubmitUserMessage', { turn_id: this.d.ids.next('turn'), content: [...content] }, baseId && `${baseId}_m${index}`);
      lastSeq = sent.last_seq;
    }
    return this.readAfter(owner, sessionId, lastSeq);
  }

  /**
   * A new session of the same owner, agent version, environment, resources and vaults whose conversation
   * and workspace are the source's at the end of one turn. The source's kernel picks the turn and
   * refuses what cannot be forked (a running turn, an unknown event, no snapshot) and records the
   * fork; then the fork's transcript mirror gets the source's cut at that turn (so its first turn
   * resumes the harness conversation exactly there), and the fork is created pointing at it (its
   * first sandbox's workspace is that turn's snapshot). A crash between the two leaves a recorded
   * fork that was never created; the next fork attempt makes a new one.
   */
  async fork(owner: string, sourceId: string, at: ForkAt): Promise<SessionRecord> {
    const source = await this.find(owner, sourceId);
    const view = viewOf(source);
    const forkId = this.d.ids.next('sesn');
    const forked = await this.d.commands.send(owner, sourceId, 'ForkSession', { fork_session_id: forkId, event_id: at.event_id ?? null, seq: at.seq ?? null });
    const created = (await this.d.journal.eventsOfCommand(sourceId, forked.command_id)).find((e) => e.type === 'ForkCreated');
    if (created?.type !== 'ForkCreated') throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the fork was accepted but is not visible yet; retry');
    const point = created.data;
    for (const file of cutTranscripts(await this.d.transcripts.files(sourceId), point.transcript)) {
      await this.d.transcripts.append({ session_id: forkId, path: file.path, offset: 0, data: file.data });
    }
    // A token is sealed to its session and resource: the fork's copy is opened and sealed again for the fork.
    for (const resource of view.resources) {
      const sealed = await this.d.secrets.get(sourceId, resource.id);
      if (sealed !== null) await this.d.secrets.put(forkId, resource.id, this.seal(forkId, resource.id, this.d.box.open(sealed, sessionSecretAad(sourceId, resource.id))));
    }
    const outcome = await this.d.commands.send(owner, forkId, 'CreateSession', {
      owner_id: owner,
      agent: { id: source.agent_id, version: source.agent_version },
      environment_id: source.environment_id,
      harness: view.harness.kind,
      title: source.title,
      metadata: source.metadata,
      idempotency_key: null,
      permission_mode: view.permission_mode,
      ...(view.resources.length > 0 ? { resources: [...view.resources] } : {}),
      ...(view.vault_ids.length > 0 ? { vault_ids: [...view.vault_ids] } : {}),
      fork: { session_id: sourceId, turn_id: point.turn_id, event_id: point.event_id, seq: point.seq, harness_session_id: point.harness_session_id },
    });
    return this.readAfter(owner, forkId, outcome.last_seq);
  }

  /**
   * Recreates an archived session the way a fork is made: its transcript mirror gets the archive's
   * transcripts first (its first turn restores them into the sandbox and resumes the harness
   * conversation), then it is created with `import` (recorded as `SessionImported`; its first
   * sandbox gets the archived workspace). A crash in between leaves a mirror of a session never
   * created; a retried import makes a new session, unless it has the same Idempotency-Key: then
   * the session already made is answered, or the same command is sent again (the mirror takes
   * each offset once, the kernel applies the command once).
   */
  async import(input: ImportSessionInput): Promise<ImportedSession> {
    const { owner, session_id: sessionId } = input;
    const key = input.idempotency_key;
    if (key === undefined) return { record: await this.sendImport(input), workspace_blob: input.origin.workspace_blob };
    const record = (await this.d.sessions.get(owner, sessionId)) ?? (await this.sendImport(input));
    // Concurrent attempts under one key each hear "applied" (the second commit of one command is a no-op): only the journal says whose blob it took.
    const [imported] = await this.d.journal.readEvents(sessionId, { types: ['SessionImported'], limit: 1 });
    return { record, workspace_blob: imported?.type === 'SessionImported' ? imported.data.from.workspace_blob : null };
  }

  private async sendImport(input: ImportSessionInput): Promise<SessionRecord> {
    const { owner, session_id: sessionId } = input;
    const key = input.idempotency_key;
    for (const file of input.transcripts) await this.d.transcripts.append({ session_id: sessionId, path: file.path, offset: 0, data: file.data });
    const outcome = await this.d.commands.send(
      owner,
      sessionId,
      'CreateSession',
      {
        ...createSessionBasics(owner, input),
        import: input.origin,
      },
      key === undefined ? undefined : IdempotentCommandIds.import(owner, key),
    );
    return this.readAfter(owner, sessionId, outcome.last_seq);
  }

  /**
   * Claims an import's Idempotency-Key before the import makes anything: scoped to the owner and
   * bound to `subject` (the archive and the agent and environment asked for, `importFingerprint`).
   * The session id the import makes, the first attempt's on a retry; another subject is
   * IDEMPOTENCY_KEY_CONFLICT.
   */
  claimImport(owner: string, key: string, subject: string): Promise<string> {
    return this.claim(owner, importKeySlot(key), subject, this.d.ids.next('sesn'), 'this Idempotency-Key was already used to import another archive, or onto another agent or environment');
  }

  /** Claims `slot` for `sessionId` unless taken: the session id it is held for; held for another subject, IDEMPOTENCY_KEY_CONFLICT. */
  private async claim(owner: string, slot: string, subject: string, sessionId: string, conflict: string): Promise<string> {
    const held = await this.d.idempotency.claim({ owner_id: owner, key: slot, subject, session_id: sessionId, created_at: this.d.clock.now().toISOString() });
    if (held.subject !== subject) throw new IllegalStateError(ErrorCodes.IDEMPOTENCY_KEY_CONFLICT, conflict);
    return held.session_id;
  }

  /** Title and metadata; `metadata: null` clears every key, a null value deletes one. Nothing to change sends nothing. */
  async update(owner: string, id: string, patch: SessionPatch): Promise<SessionRecord> {
    const record = await this.find(owner, id);
    const metadata = patch.metadata === null ? Object.fromEntries(Object.keys(record.metadata).map((k) => [k, null])) : patch.metadata;
    if (patch.title === undefined && (metadata === undefined || Object.keys(metadata).length === 0)) return record;
    const outcome = await this.d.commands.send(owner, id, 'UpdateSession', {
      ...(patch.title !== undefined ? { title: patch.title } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
    } as CommandData<'UpdateSession'>);
    return this.readAfter(owner, id, outcome.last_seq);
  }

  async archive(owner: string, id: string): Promise<SessionRecord> {
    return this.lifecycle(owner, id, 'ArchiveSession');
  }

  /** The next turn starts a fresh harness conversation instead of resuming (refused while a turn runs). */
  async endConversation(owner: string, id: string): Promise<SessionRecord> {
    return this.lifecycle(owner, id, 'EndConversation');
  }

  /** Any state is accepted; a second delete answers the same. The session's secrets go with it. */
  async delete(owner: string, id: string): Promise<void> {
    await this.find(owner, id);
    await this.d.commands.send(owner, id, 'DeleteSession', {});
    await this.d.secrets.delete(id);
  }

  /** Attaches a resource (mounted before the next turn); a refused one leaves no secret behind. */
  async addResource(owner: string, id: string, { resource, token }: ResourceToAttach): Promise<SessionRecord> {
    await this.find(owner, id);
    if (token !== null) await this.d.secrets.put(id, resource.id, this.seal(id, resource.id, token));
    try {
      const outcome = await this.d.commands.send(owner, id, 'AddSessionResource', { resource });
      return await this.readAfter(owner, id, outcome.last_seq);
    } catch (error) {
      await this.d.secrets.delete(id, resource.id);
      throw error;
    }
  }

  /** Token rotation: the next clone the platform makes for this repository uses the new token. */
  async replaceResourceToken(owner: string, id: string, resourceId: string, token: string): Promise<void> {
    await this.find(owner, id);
    await this.d.secrets.put(id, resourceId, this.seal(id, resourceId, token));
  }

  /** Detaches a resource: later sandboxes do not get it, and its token is forgotten. */
  async removeResource(owner: string, id: string, resourceId: string): Promise<SessionRecord> {
    await this.find(owner, id);
    const outcome = await this.d.commands.send(owner, id, 'RemoveSessionResource', { resource_id: resourceId });
    await this.d.secrets.delete(id, resourceId);
    return this.readAfter(owner, id, outcome.last_seq);
  }

  /** Releases the sandbox; a TERMINATED session is accepted and answers the same. */
  async terminate(owner: string, id: string): Promise<SessionRecord> {
    return this.lifecycle(owner, id, 'TerminateSession');
  }

  /** Releases the sandbox and keeps workspace, transcript and conversation (refused while a turn is active). */
  async pause(owner: string, id: string): Promise<SessionRecord> {
    return this.lifecycle(owner, id, 'PauseSession');
  }

  /** Requests a new sandbox for a paused session (a message does the same); not paused: answers as it is. */
  async resume(owner: string, id: string): Promise<SessionRecord> {
    return this.lifecycle(owner, id, 'ResumeSession');
  }

  /**
   * Probes the sandbox first (the kernel's recover decision is pure and needs the facts), then
   * sends RecoverSession. With `waitMs`, a recover that starts a new sandbox answers once it is
   * bound and ready, a terminal state is reached, or the budget runs out (`rebuild` says which).
   * A turn left waiting for its transcript is the turn-reconciler's to settle: it reacts to the
   * recover's events like to any other.
   */
  async recover(owner: string, id: string, options: Readonly<{ waitMs?: number }> = {}): Promise<RecoverAnswer> {
    const record = await this.find(owner, id);
    const target = probeTarget(record);
    const probe = target.sandbox === null ? NO_SANDBOX : await this.d.probe.probe(target);
    const outcome = await this.d.commands.send(owner, id, 'RecoverSession', { probe });
    const after = await this.readAfter(owner, id, outcome.last_seq);
    const recover = recoverResult(await this.d.journal.eventsOfCommand(id, outcome.command_id), viewOf(after).lifecycle);
    if (options.waitMs === undefined || options.waitMs <= 0) return { record: after, recover };
    const waited = await this.awaitRuntimeRebuild(owner, id, { budgetMs: options.waitMs, pollMs: this.d.rebuildPollMs ?? DEFAULT_REBUILD_WAIT.pollMs });
    return { record: waited.record, recover, rebuild: waited.because };
  }

  /**
   * Waits, bounded by the clock, until a rebuilding session has a dispatchable sandbox. A terminal
   * session returns at once; past the budget the last state seen is returned without another
   * sleep or read.
   */
  async awaitRuntimeRebuild(owner: string, id: string, policy: RebuildWaitPolicy = DEFAULT_REBUILD_WAIT): Promise<Readonly<{ record: SessionRecord; because: RebuildWaitEnd }>> {
    const startedAt = this.d.clock.now();
    let record = await this.find(owner, id);
    for (;;) {
      const step = nextRebuildWaitStep(viewOf(record), startedAt, this.d.clock.now(), policy);
      if (step.kind === 'stop') return { record, because: step.because };
      await this.sleep(step.delayMs);
      record = await this.find(owner, id);
    }
  }

  /**
   * Each event becomes one command, in order; the answer echoes them as the journal recorded them.
   * A user message to a sandbox whose lease is past first recovers the session (expiry alone is
   * not proof of death: the recover probes it), so the message never waits on a sandbox that is
   * gone. With an Idempotency-Key (scoped to the owner and the session, bound to the exact batch)
   * a retry re-sends the same command ids: each event is recorded once and answered the same.
   */
  async sendEvents(owner: string, sessionId: string, events: readonly SendableEvent[], idempotencyKey?: string): Promise<PublicEvent[]> {
    for (const event of events) {
      if (event.type === 'user.message') this.checkMessageSize(event.type, event.content);
      if (event.type === 'user.custom_tool_result') this.checkMessageSize(event.type, event.content ?? []);
    }
    const record = await this.find(owner, sessionId);
    if (idempotencyKey !== undefined) await this.claimEventsKey(owner, sessionId, idempotencyKey, events);
    const view = viewOf(record);
    if (events.some((e) => e.type === 'user.message') && boundLeaseExpired(view.sandbox, this.d.clock.now()) && !view.runtime_unavailable) {
      await this.recover(owner, sessionId);
    }
    const echoed: PublicEvent[] = [];
    for (const [index, event] of events.entries()) {
      const keyed = idempotencyKey === undefined ? undefined : { key: idempotencyKey, index };
      const outcome = await this.sendOne(owner, sessionId, event, keyed);
      echoed.push(await this.echo(sessionId, event, outcome));
    }
    return echoed;
  }

  private async claimEventsKey(owner: string, sessionId: string, key: string, events: readonly SendableEvent[]): Promise<void> {
    await this.claim(owner, eventsKeySlot(sessionId, key), batchFingerprint(events), sessionId, 'this Idempotency-Key was already used on this session for other events');
  }

  private seal(sessionId: string, resourceId: string, token: string) {
    return this.d.box.seal(token, sessionSecretAad(sessionId, resourceId));
  }

  private checkMessageSize(type: SendableEvent['type'], content: readonly ContentBlock[] | ToolResultContent): void {
    const bytes = jsonBytes(content);
    if (bytes > PayloadLimits.userMessageBytes) throw tooLarge(type, bytes);
  }

  private sendOne(owner: string, sessionId: string, event: SendableEvent, keyed?: Readonly<{ key: string; index: number }>): Promise<AcceptedOutcome> {
    const commandId = keyed && IdempotentCommandIds.sendEvent(owner, sessionId, keyed.key, keyed.index);
    switch (event.type) {
      case 'user.message': {
        const turnId = keyed ? IdempotentCommandIds.sendTurn(owner, sessionId, keyed.key, keyed.index) : this.d.ids.next('turn');
        return this.d.commands.send(owner, sessionId, 'SubmitUserMessage', { turn_id: turnId, content: [...event.content] }, commandId);
      }
      case 'user.interrupt':
        return this.d.commands.send(owner, sessionId, 'InterruptTurn', {}, commandId);
      case 'user.tool_confirmation':
        return this.d.commands.send(owner, sessionId, 'ConfirmToolUse', { tool_use_id: event.tool_use_id, result: event.result, deny_message: event.deny_message ?? null }, commandId);
      case 'user.custom_tool_result':
        return this.d.commands.send(
          owner,
          sessionId,
          'SubmitCustomToolResult',
          { custom_tool_use_id: event.custom_tool_use_id, content: [...(event.content ?? [])], is_error: event.is_error ?? false },
          commandId,
        );
    }
  }

  private async echo(sessionId: string, sent: SendableEvent, outcome: AcceptedOutcome): Promise<PublicEvent> {
    const seqs = outcome.events.map((e) => e.seq);
    if (seqs.length > 0) {
      const recorded = await this.d.journal.readEvents(sessionId, { afterSeq: Math.min(...seqs) - 1, limit: seqs.length, order: 'asc' });
      const match = recorded.map(toPublicEvent).find((e) => e.type === sent.type);
      if (match) return match;
    }
    // Accepted without a new event of its own (an interrupt with nothing running).
    return { ...sent, id: outcome.events[0]?.id ?? '', processed_at: this.d.clock.now().toISOString() } as PublicEvent;
  }

  private async lifecycle(owner: string, id: string, type: 'ArchiveSession' | 'EndConversation' | 'TerminateSession' | 'PauseSession' | 'ResumeSession'): Promise<SessionRecord> {
    await this.find(owner, id);
    const outcome = await this.d.commands.send(owner, id, type, {});
    return this.readAfter(owner, id, outcome.last_seq);
  }

  /** The read model once it reflects `seq` (the kernel projects after commit; this bounds the lag). */
  private async readAfter(owner: string, id: string, seq: number): Promise<SessionRecord> {
    const deadline = Date.now() + this.projectionWaitMs;
    for (;;) {
      const record = await this.d.sessions.get(owner, id);
      if (record && record.last_seq >= seq) return record;
      if (Date.now() > deadline) {
        if (record) return record;
        throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the session was accepted but is not visible yet; retry the read');
      }
      await this.sleep(5);
    }
  }
}
