import { intOption } from '../args';
import { ApiError } from '../exit-codes';
import { contentText, eventLine } from '../output/format';
import { tailEvents, type PublicEvent } from '../sse/event-tail';
import { str, type Command, type Context } from './command';
import { sendEvents } from './sessions';

const streamUrl = (ctx: Context, sessionId: string) => ctx.api.url(`/v1/sessions/${sessionId}/events/stream`);

const reconnectNotice = (ctx: Context) => (r: { delayMs: number; after: number; reason: string }) =>
  ctx.io.err(`connection lost (${r.reason}); resuming after #${r.after} in ${(r.delayMs / 1000).toFixed(1)} s`);

const tail: Command = {
  name: ['tail'],
  args: ['session'],
  options: {
    after: { type: 'string', help: 'start after this seq (default 0: the whole history)' },
    until: { type: 'string', help: 'stop after the first event of this type, e.g. session.status_idle' },
  },
  summary: 'stream a session’s events, resuming through dropped connections',
  run: async (ctx, a, o) => {
    const until = str(o, 'until');
    const { lastSeq, stop } = await tailEvents({
      url: streamUrl(ctx, a.session),
      headers: ctx.api.headers(),
      after: intOption(o, 'after') ?? 0,
      signal: ctx.signal,
      fetchImpl: ctx.fetchImpl,
      initialBackoffMs: ctx.streamBackoffMs,
      onReconnect: reconnectNotice(ctx),
      onEvent: (event, seq) => {
        ctx.io.out(ctx.json ? JSON.stringify({ seq, ...event }) : eventLine(event, seq));
        return until && event.type === until ? 'stop' : undefined;
      },
    });
    if (stop === 'aborted') ctx.io.err(`stopped after #${lastSeq} (resume with --after ${lastSeq})`);
  },
};

/** How a turn ended, from the event that ended it. */
type TurnEnd = { kind: 'end_turn' | 'requires_action' | 'failed' | 'terminated'; event: PublicEvent };

function turnEnd(e: PublicEvent): TurnEnd | null {
  if (e.type === 'session.status_terminated') return { kind: 'terminated', event: e };
  if (e.type !== 'session.status_idle') return null;
  const stop = (e.stop_reason ?? {}) as { type?: string };
  if (stop.type === 'requires_action') return { kind: 'requires_action', event: e };
  if (stop.type === 'end_turn') return { kind: 'end_turn', event: e };
  return { kind: 'failed', event: e };
}

const send: Command = {
  name: ['send'],
  args: ['session', 'text'],
  options: {
    wait: { type: 'boolean', help: 'wait until the turn ends, showing progress on stderr and the answer on stdout' },
    timeout: { type: 'string', help: 'seconds to wait with --wait (default 600)' },
  },
  summary: 'send a user message',
  run: async (ctx, a, o) => {
    const sent = await sendEvents(ctx, a.session, [{ type: 'user.message', content: [{ type: 'text', text: a.text }] }]);
    const messageId = sent.data?.find((e) => e.type === 'user.message')?.id;
    if (!o.wait) return { json: sent, human: `sent ${messageId ?? ''}`.trim() };
    if (!messageId) throw new ApiError(0, 'api_error', 'the API did not return the sent event, so its turn cannot be followed', 'NO_EVENT_ID');

    const timeoutMs = (intOption(o, 'timeout', 1) ?? 600) * 1000;
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort();
    ctx.signal.addEventListener('abort', onOuterAbort);
    const timer = setTimeout(() => abort.abort(), timeoutMs);

    // Replay from the start and skip until our message: the stream has no "now" cursor, and
    // a turn counts as ours once it starts running after our message.
    let seenOurs = false;
    let ourTurnRunning = false;
    let end: TurnEnd | null = null;
    const turnEvents: PublicEvent[] = [];
    try {
      await tailEvents({
        url: streamUrl(ctx, a.session),
        headers: ctx.api.headers(),
        after: 0,
        signal: abort.signal,
        fetchImpl: ctx.fetchImpl,
        initialBackoffMs: ctx.streamBackoffMs,
        onReconnect: reconnectNotice(ctx),
        onEvent: (event, seq) => {
          if (!seenOurs) {
            seenOurs = event.id === messageId;
            return;
          }
          turnEvents.push(event);
          if (event.type === 'session.status_running') ourTurnRunning = true;
          if (!ctx.json) ctx.io.err(`  ${eventLine(event, seq)}`);
          if (!ctx.json && event.type === 'agent.message' && ourTurnRunning) ctx.io.out(contentText(event.content));
          end = ourTurnRunning || event.type === 'session.status_terminated' ? turnEnd(event) : null;
          return end ? 'stop' : undefined;
        },
      });
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onOuterAbort);
    }
    const ended = end as TurnEnd | null;
    if (!ended) {
      if (ctx.signal.aborted) return;
      throw new ApiError(0, 'timeout_error', `the turn did not end within ${timeoutMs / 1000} s`, 'TIMEOUT');
    }
    if (ctx.json) ctx.io.out(JSON.stringify({ sent: sent.data, events: turnEvents, stop: ended.kind }, null, 2));
    if (ended.kind === 'requires_action') {
      const ids = (ended.event.stop_reason as { event_ids?: string[] }).event_ids ?? [];
      const custom = new Set(turnEvents.filter((e) => e.type === 'agent.custom_tool_use').map((e) => e.id));
      const approvals = ids.filter((id) => !custom.has(id));
      const results = ids.filter((id) => custom.has(id));
      if (approvals.length > 0) ctx.io.err(`waiting for approval of ${approvals.join(' ')}: berth sessions approve|deny ${a.session} <tool-use-id>`);
      if (results.length > 0) ctx.io.err(`waiting for the result of custom tool call ${results.join(' ')}: berth sessions tool-result ${a.session} <custom-tool-use-id> <text> [--error]`);
    }
    if (ended.kind === 'failed') {
      const failure = (ended.event.berth_failure ?? {}) as { reason?: string; message?: string };
      throw new ApiError(0, 'turn_failed', `the turn failed: ${failure.message ?? 'retries exhausted'}`, failure.reason ?? 'TURN_FAILED');
    }
    if (ended.kind === 'terminated') throw new ApiError(0, 'session_terminated', 'the session was terminated', 'SESSION_TERMINATED');
  },
};

export const streamCommands: readonly Command[] = [send, tail];
