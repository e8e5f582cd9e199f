import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { intOption, requiredOption } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { createWriteStream, existsSync, openAsBlob, renameSync, statSync } from 'node:fs';
import { str, type Command, type Context, type Output } from './command';
import { uploadFile } from './files';

type Session = {
  id: string;
  title: string | null;
  status: string;
  agent: { id: string; name?: string; version?: number };
  environment_id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  usage?: { input_tokens?: number; output_tokens?: number };
};

/** A source session's resource an import did not recreate (its file or token stayed on the source install). */
type UncarriedResource = { type: string; id: string; mount_path: string; file_id?: string; url?: string };

const STATUSES = ['idle', 'running', 'rescheduling', 'terminated'];

const sessionOutput = (s: Session, extra: readonly [string, string | undefined][] = []): Output => ({
  json: s,
  human: details([
    ['id', s.id],
    ['title', s.title],
    ['status', s.status],
    ['agent', s.agent ? `${s.agent.name ?? s.agent.id}${s.agent.version ? ` v${s.agent.version}` : ''}` : undefined],
    ['environment', s.environment_id],
    ['created', s.created_at],
    ['updated', s.updated_at],
    ['archived', s.archived_at],
    ...extra,
  ]),
});

/** Commands that answer with whatever the API returns (a session, or an outcome object). */
const action = (path: string, summary: string, verb: string): Command => ({
  name: ['sessions', verb],
  args: ['session'],
  options: {},
  summary,
  run: async ({ api }, a) => {
    const res = await api.request<Session | Record<string, unknown> | null>('POST', `/v1/sessions/${a.session}${path}`);
    if (res && typeof res === 'object' && (res as Session).id === a.session && 'status' in res) return sessionOutput(res as Session);
    return { json: res, human: res && typeof res === 'object' ? details(Object.entries(res)) : `${verb} ${a.session}: ok` };
  },
});

/** `--file PATH_OR_ID[=MOUNT_PATH]`: a file id is used as is, a local path is uploaded first. */
async function fileResource(ctx: Context, spec: string): Promise<{ type: 'file'; file_id: string; mount_path?: string }> {
  const [source, mount] = splitOnce(spec, '=');
  const isId = /^file_[A-Za-z0-9_-]+$/.test(source) && !existsSync(source);
  const fileId = isId ? source : (await uploadFile(ctx.api, source)).id;
  if (!isId) ctx.io.err(`uploaded ${source} as ${fileId}`);
  return { type: 'file', file_id: fileId, ...(mount ? { mount_path: mount } : {}) };
}

/** `--repo URL[#REF]`: REF is a commit when it looks like a SHA (7–40 hex digits), else a branch. */
function repoResource(spec: string, token: string | undefined) {
  const [url, ref] = splitOnce(spec, '#');
  const checkout = ref === undefined ? undefined : /^[0-9a-f]{7,40}$/i.test(ref) ? { type: 'commit', sha: ref } : { type: 'branch', name: ref };
  return { type: 'github_repository', url, ...(checkout ? { checkout } : {}), ...(token ? { authorization_token: token } : {}) };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.lastIndexOf(separator);
  return at <= 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

export async function sendEvents(ctx: Context, sessionId: string, events: readonly unknown[]): Promise<{ data?: { id: string; type: string }[] }> {
  return ctx.api.request('POST', `/v1/sessions/${sessionId}/events`, { body: { events } });
}

export const sessionCommands: readonly Command[] = [
  {
    name: ['sessions', 'create'],
    args: [],
    options: {
      agent: { type: 'string', help: 'agent id' },
      env: { type: 'string', help: 'environment id' },
      title: { type: 'string', help: 'title' },
      message: { type: 'string', help: 'first user message' },
      'idempotency-key': { type: 'string', help: 'retry-safe create: the same key returns the same session' },
      file: { type: 'string', multiple: true, help: 'PATH or file_… id [=MOUNT_PATH]: a local file is uploaded first; mounted at MOUNT_PATH or /mnt/session/uploads/<id>' },
      repo: { type: 'string', multiple: true, help: 'URL[#BRANCH or #COMMIT]: cloned into /workspace/<repo> (token from $BERTH_GIT_TOKEN)' },
      vault: { type: 'string', multiple: true, help: 'vlt_… id: the egress adds its credentials to the session\'s requests (the sandbox never sees them)' },
    },
    summary: 'start a session',
    run: async (ctx, _a, o) => {
      const { api } = ctx;
      const message = str(o, 'message');
      const key = str(o, 'idempotency-key');
      const vaults = (o.vault as string[] | undefined) ?? [];
      const resources = [
        ...(await Promise.all(((o.file as string[] | undefined) ?? []).map((spec) => fileResource(ctx, spec)))),
        ...((o.repo as string[] | undefined) ?? []).map((spec) => repoResource(spec, ctx.env.BERTH_GIT_TOKEN)),
      ];
      const body = {
        agent: requiredOption(o, 'agent'),
        environment_id: requiredOption(o, 'env'),
        title: str(o, 'title'),
        initial_events: message ? [{ type: 'user.message', content: [{ type: 'text', text: message }] }] : undefined,
        resources: resources.length > 0 ? resources : undefined,
        vault_ids: vaults.length > 0 ? vaults : undefined,
      };
      return sessionOutput(await api.request<Session>('POST', '/v1/sessions', { body, headers: key ? { 'idempotency-key': key } : {} }));
    },
  },
  {
    name: ['sessions', 'list'],
    args: [],
    options: {
      status: { type: 'string', multiple: true, help: STATUSES.join(' | ') },
      agent: { type: 'string', help: 'only this agent' },
      'include-archived': { type: 'boolean', help: 'also list archived sessions' },
      limit: { type: 'string', help: 'page size' },
    },
    summary: 'list sessions',
    run: async ({ api }, _a, o) => {
      const statuses = (o.status as string[] | undefined) ?? [];
      for (const s of statuses) if (!STATUSES.includes(s)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      const page = await api.request<{ data: Session[] }>('GET', '/v1/sessions', {
        query: { limit: intOption(o, 'limit', 1), 'statuses[]': statuses, agent_id: str(o, 'agent'), include_archived: o['include-archived'] ? true : undefined },
      });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (s) => s.id },
          { header: 'status', value: (s) => s.status + (s.archived_at ? ' (archived)' : '') },
          { header: 'agent', value: (s) => display(s.agent?.name ?? s.agent?.id) },
          { header: 'created', value: (s) => s.created_at },
          { header: 'title', value: (s) => display(s.title) },
        ]),
      };
    },
  },
  {
    name: ['sessions', 'get'],
    args: ['session'],
    options: {},
    summary: 'show a session',
    run: async ({ api }, a) => sessionOutput(await api.request<Session>('GET', `/v1/sessions/${a.session}`)),
  },
  action('/archive', 'archive a session (read-only from then on)', 'archive'),
  {
    name: ['sessions', 'delete'],
    args: ['session'],
    options: {},
    summary: 'delete a session, its events and its sandbox',
    run: async ({ api }, a) => {
      const res = await api.request<unknown>('DELETE', `/v1/sessions/${a.session}`);
      return { json: res, human: `deleted ${a.session}` };
    },
  },
  action('/recover', 'recover a session whose sandbox or turn was lost', 'recover'),
  action('/terminate', 'terminate a session and stop its sandbox', 'terminate'),
  action('/pause', 'pause a session: release its sandbox, keep conversation, workspace, queued messages and pending approvals (a running turn finishes first)', 'pause'),
  action('/resume', 'resume a paused session in a new sandbox', 'resume'),
  {
    name: ['sessions', 'fork'],
    args: ['session'],
    options: {
      'event-id': { type: 'string', help: "the turn to fork after, by its user.message event id" },
      seq: { type: 'string', help: "the turn to fork after, by its user.message seq" },
    },
    summary: "a new session with this one's conversation and workspace at the end of a turn (default: the latest completed turn)",
    run: async ({ api }, a, o) => {
      const eventId = str(o, 'event-id');
      const seq = o.seq === undefined ? undefined : intOption(o, 'seq', 1);
      if (eventId !== undefined && seq !== undefined) throw new UsageError('name the turn by --event-id or by --seq, not both');
      const body = eventId !== undefined ? { event_id: eventId } : seq !== undefined ? { seq } : {};
      const fork = await api.request<Session & { berth?: { forked_from?: { session_id: string; turn_id: string } } }>('POST', `/v1/sessions/${a.session}/fork`, { body });
      const from = fork.berth?.forked_from;
      return sessionOutput(fork, [['forked from', from ? `${from.session_id} at ${from.turn_id}` : undefined]]);
    },
  },
  {
    name: ['sessions', 'export'],
    args: ['session'],
    optional: ['file'],
    options: {},
    summary: 'save a session as one archive (journal, harness transcripts, outputs, workspace; default ./<session>.berth.tar)',
    run: async ({ api, io }, a) => {
      const file = resolve(a.file ?? `${a.session}.berth.tar`);
      const res = await api.raw('GET', `/v1/sessions/${a.session}/export`);
      // Written under a temporary name and renamed once complete: a cut download never looks like an archive.
      const partial = `${file}.partial`;
      await pipeline(Readable.fromWeb(res.body as WebReadableStream), createWriteStream(partial));
      renameSync(partial, file);
      const bytes = statSync(file).size;
      io.err(`exported ${a.session} to ${file} (${bytes} bytes)`);
      return { json: { session_id: a.session, path: file, bytes }, human: file };
    },
  },
  {
    name: ['sessions', 'import'],
    args: ['file'],
    options: {
      agent: { type: 'string', help: 'run it on this agent of yours (its latest version) instead of recreating the archived one' },
      env: { type: 'string', help: 'run it in this environment of yours (same harness) instead of recreating the archived one' },
      'idempotency-key': { type: 'string', help: 'retry-safe import: the same key and archive return the same session' },
    },
    summary: 'recreate an exported session (a `sessions export` archive) under your key, with new ids; it continues its conversation',
    run: async ({ api }, a, o) => {
      let archive: Blob;
      try {
        archive = await openAsBlob(resolve(a.file));
      } catch (e) {
        throw new UsageError(`cannot read ${a.file}: ${(e as Error).message}`);
      }
      const key = str(o, 'idempotency-key');
      const res = await api.raw('POST', '/v1/sessions/import', {
        body: archive,
        headers: { 'content-type': 'application/x-tar', ...(key ? { 'idempotency-key': key } : {}) },
        query: { agent_id: str(o, 'agent'), environment_id: str(o, 'env') },
      });
      const imported = (await res.json()) as Session & { berth?: { imported_from?: { session_id: string; resources_not_carried?: UncarriedResource[] } } };
      const left = imported.berth?.imported_from?.resources_not_carried ?? [];
      return sessionOutput(imported, [
        ['imported from', imported.berth?.imported_from?.session_id],
        ['not carried over', left.length === 0 ? undefined : `${left.map((r) => `${r.type} ${r.url ?? r.file_id} at ${r.mount_path}`).join(', ')} (attach again what the session still needs)`],
      ]);
    },
  },
  {
    name: ['sessions', 'interrupt'],
    args: ['session'],
    options: {},
    summary: 'interrupt the running turn',
    run: async (ctx, a) => {
      const res = await sendEvents(ctx, a.session, [{ type: 'user.interrupt' }]);
      return { json: res, human: `interrupt sent to ${a.session}` };
    },
  },
  {
    name: ['sessions', 'approve'],
    args: ['session', 'tool-use-id'],
    options: {},
    summary: 'allow a tool use the session is waiting on',
    run: async (ctx, a) => {
      const res = await sendEvents(ctx, a.session, [{ type: 'user.tool_confirmation', tool_use_id: a['tool-use-id'], result: 'allow' }]);
      return { json: res, human: `allowed ${a['tool-use-id']}` };
    },
  },
  {
    name: ['sessions', 'tool-result'],
    args: ['session', 'custom-tool-use-id', 'text'],
    options: { error: { type: 'boolean', help: 'the tool failed: the text is its error' } },
    summary: 'answer a custom tool call the session is waiting on, with a text result',
    run: async (ctx, a, o) => {
      const id = a['custom-tool-use-id'];
      const res = await sendEvents(ctx, a.session, [{ type: 'user.custom_tool_result', custom_tool_use_id: id, content: [{ type: 'text', text: a.text }], is_error: o.error === true }]);
      return { json: res, human: `answered ${id}` };
    },
  },
  {
    name: ['sessions', 'deny'],
    args: ['session', 'tool-use-id'],
    options: { message: { type: 'string', help: 'why, passed to the model' } },
    summary: 'deny a tool use the session is waiting on',
    run: async (ctx, a, o) => {
      const message = str(o, 'message');
      const res = await sendEvents(ctx, a.session, [{ type: 'user.tool_confirmation', tool_use_id: a['tool-use-id'], result: 'deny', ...(message ? { deny_message: message } : {}) }]);
      return { json: res, human: `denied ${a['tool-use-id']}` };
    },
  },
];
