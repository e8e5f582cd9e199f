import type { ContentBlock, RecordedEvent } from '@berth/contracts';
import type { SessionJournal } from '@berth/ports';
import { evolve, initialState, type SessionState } from '@berth/session-domain';

/** What the manager needs to know about a session, folded from its journal (the kernel's truth). */
export type SessionFacts = Readonly<{
  state: SessionState;
  events: readonly RecordedEvent[];
}>;

/**
 * Reads a session's state the way the kernel derives it: every journal event folded with the
 * session domain's `evolve`. The manager never writes it; it only reads to decide what to run.
 */
export class SessionFactsReader {
  constructor(private readonly journal: SessionJournal) {}

  async load(sessionId: string): Promise<SessionFacts> {
    const events = await this.journal.readEvents(sessionId, { order: 'asc' });
    return { state: events.reduce<SessionState>((s, e) => evolve(s, e), initialState()), events };
  }
}

/** The user message that started a turn, as plain text for the harness. */
export function promptOf(events: readonly RecordedEvent[], turnId: string): string | null {
  for (const event of events) {
    if (event.type === 'UserMessageReceived' && event.data.turn_id === turnId) return textOf(event.data.content);
  }
  return null;
}

function textOf(content: readonly ContentBlock[]): string {
  return content
    .map((block) => (block.type === 'text' ? block.text : `[${block.type} attachment omitted]`))
    .join('\n');
}

/** The public `agent.tool_use` / `agent.mcp_tool_use` event id → the harness's own tool use id (for confirmations). */
export function harnessToolUseId(events: readonly RecordedEvent[], toolUseEventId: string): string | null {
  const found = events.find((e) => e.id === toolUseEventId);
  return found?.type === 'AgentToolUseRecorded' || found?.type === 'AgentMcpToolUseRecorded' ? found.data.harness_tool_use_id : null;
}
