import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import type { Api } from '../api/client';
import type { PublicEvent } from '../api/types';
import { OutputsPanel, ResourcesList, saveBlob, WorkspaceBrowser } from '../components/SessionFiles';
import { Timeline } from '../components/Timeline';
import { Empty, ErrorBanner, Loading, StatusBadge } from '../components/ui';
import { foldEvents } from '../events/fold';
import { hrefFor, navigate } from '../router';
import { openSessionStream, type StreamState } from '../stream/session-stream';
import { useLoad } from '../use-load';

export function SessionView({ api, sessionId }: { api: Api; sessionId: string }) {
  const session = useLoad(() => api.getSession(sessionId), [api, sessionId]);
  const [events, setEvents] = useState<PublicEvent[]>([]);
  const [stream, setStream] = useState<StreamState>({ phase: 'connecting', error: null });
  const [actionError, setActionError] = useState<Error | null>(null);
  const [message, setMessage] = useState('');
  const [sending, setSending] = useState(false);
  const [panel, setPanel] = useState<'outputs' | 'workspace' | 'resources' | null>(null);
  const endRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    setEvents([]);
    const s = openSessionStream({
      url: api.streamUrl(sessionId),
      headers: api.headers(),
      onEvent: (e) => setEvents((prev) => [...prev, e]),
      onState: setStream,
    });
    return () => s.close();
  }, [api, sessionId]);

  const timeline = useMemo(() => foldEvents(events), [events]);
  // Outputs are captured and the workspace changes at the end of each turn: panels reload then.
  const turnsEnded = useMemo(() => events.filter((e) => e.type === 'session.status_idle').length, [events]);
  // A block body on purpose: newer browsers make scrollIntoView return a promise, and an effect may only return a cleanup.
  useEffect(() => {
    endRef.current?.scrollIntoView({ block: 'end' });
  }, [timeline.blocks.length]);

  const act = async (what: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await what();
    } catch (e) {
      setActionError(e as Error);
    }
  };

  async function send(e: FormEvent) {
    e.preventDefault();
    const text = message.trim();
    if (!text) return;
    setSending(true);
    setActionError(null);
    try {
      await api.sendMessage(sessionId, text);
      setMessage('');
    } catch (err) {
      setActionError(err as Error);
    } finally {
      setSending(false);
    }
  }

  if (session.loading && !session.data) return <Loading what="session" />;
  if (!session.data) {
    return (
      <section>
        <a href={hrefFor({ page: 'sessions' })}>← Sessions</a>
        <ErrorBanner error={session.error} onRetry={session.reload} />
      </section>
    );
  }

  const status = timeline.status === 'unknown' ? session.data.status : timeline.status;
  // The latest `berth.lifecycle` event says whether the session is paused now; before any, the session as loaded.
  const lifecycle = events.filter((e) => e.type === 'berth.lifecycle').at(-1)?.['lifecycle'];
  const paused = lifecycle === undefined || lifecycle === 'pause_requested' ? session.data.berth?.paused === true : lifecycle === 'paused';
  const resources = session.data.resources ?? [];
  // A terminated Berth session comes back on the next message (the seed's TERMINATED → READY); only deletion ends it.
  const ended = status === 'deleted';
  return (
    <section className="session">
      <div className="page-head">
        <a href={hrefFor({ page: 'sessions' })}>← Sessions</a>
        <h2>{session.data.title || 'Untitled session'}</h2>
        <StatusBadge status={status} />
        <span className={`stream stream-${stream.phase}`} data-testid="stream-state" title={stream.error ?? ''}>
          {stream.phase === 'live' ? 'live' : stream.phase}
        </span>
      </div>
      <div className="row meta">
        <span className="mono muted">{session.data.id}</span>
        {session.data.berth?.imported_from && (
          <span className="muted" data-testid="session-imported-from">
            imported from <span className="mono">{session.data.berth.imported_from.session_id}</span>
          </span>
        )}
        {session.data.berth?.forked_from && (
          <span className="muted" data-testid="session-forked-from">
            forked from <span className="mono">{session.data.berth.forked_from.session_id}</span>
          </span>
        )}
        <span className="spacer" />
        <button
          type="button"
          className="link"
          onClick={() => act(async () => saveBlob(await api.exportSession(sessionId), `${sessionId}.berth.tar`))}
          disabled={ended || status === 'running'}
          data-testid="session-export"
          title="Download the session as one archive (conversation, transcripts, outputs, workspace) to import on this or another Berth"
        >
          Export
        </button>
        <button type="button" onClick={() => act(() => api.interrupt(sessionId))} disabled={status !== 'running'} data-testid="session-interrupt">
          Interrupt
        </button>
        {paused ? (
          <button type="button" onClick={() => act(() => api.resume(sessionId))} disabled={ended} data-testid="session-resume" title="Bring the sandbox back (a message does too)">
            Resume
          </button>
        ) : (
          <button
            type="button"
            onClick={() => act(() => api.pause(sessionId))}
            disabled={ended || status === 'terminated' || lifecycle === 'pause_requested'}
            data-testid="session-pause"
            title="Release the sandbox; workspace, conversation, queued messages and pending approvals are kept (a running turn finishes first)"
          >
            {lifecycle === 'pause_requested' ? 'Pausing after this turn…' : 'Pause'}
          </button>
        )}
        <button type="button" onClick={() => act(() => api.recover(sessionId))} data-testid="session-recover">
          Recover
        </button>
        <button
          type="button"
          className="danger"
          disabled={ended || status === 'terminated'}
          onClick={() => window.confirm('Terminate this session? Its sandbox is stopped.') && act(() => api.terminate(sessionId))}
          data-testid="session-terminate"
        >
          Terminate
        </button>
      </div>
      <div className="tabs" role="tablist">
        {(['outputs', 'workspace', 'resources'] as const).map((name) => (
          <button key={name} type="button" className={panel === name ? 'active' : ''} onClick={() => setPanel(panel === name ? null : name)} data-testid={`tab-${name}`}>
            {name === 'outputs' ? 'Outputs' : name === 'workspace' ? 'Workspace' : `Resources (${resources.length})`}
          </button>
        ))}
      </div>
      {panel === 'outputs' && <OutputsPanel api={api} sessionId={sessionId} version={turnsEnded} />}
      {panel === 'workspace' && <WorkspaceBrowser api={api} sessionId={sessionId} version={turnsEnded} />}
      {panel === 'resources' && <ResourcesList resources={resources} />}
      <ErrorBanner error={actionError} />
      {stream.phase === 'closed' && stream.error && <ErrorBanner error={new Error(`Stream closed: ${stream.error}`)} />}
      {timeline.blocks.length === 0 ? (
        stream.phase === 'live' ? <Empty>Nothing here yet. Send a message to start the agent.</Empty> : <Loading what="events" />
      ) : (
        <Timeline
          blocks={timeline.blocks}
          onDecide={(id, result, deny) => act(() => api.confirmTool(sessionId, id, result, deny))}
          onResult={(id, result, isError) => act(() => api.customToolResult(sessionId, id, result, isError))}
          forkable={timeline.forkable}
          onFork={(eventId) => act(async () => navigate({ page: 'session', id: (await api.fork(sessionId, eventId)).id }))}
        />
      )}
      <div ref={endRef} />
      {timeline.pendingToolUseIds.length > 0 && <p className="waiting-hint">The agent is waiting for you to approve or deny {timeline.pendingToolUseIds.length === 1 ? 'a tool use' : `${timeline.pendingToolUseIds.length} tool uses`}.</p>}
      <form className="composer" onSubmit={send}>
        <textarea
          rows={3}
          placeholder={ended ? 'This session has ended.' : 'Message the agent… (Ctrl+Enter to send)'}
          value={message}
          disabled={ended}
          onChange={(e) => setMessage(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e);
          }}
          data-testid="composer-input"
        />
        <button type="submit" className="primary" disabled={sending || ended || !message.trim()} data-testid="composer-send">
          {sending ? 'Sending…' : 'Send'}
        </button>
      </form>
      {timeline.usage && (
        <p className="muted usage">
          Tokens: {timeline.usage.input_tokens ?? 0} in · {timeline.usage.output_tokens ?? 0} out
        </p>
      )}
    </section>
  );
}
