import type { SessionRecord } from '@berth/ports';
import { deriveSessionView, type SessionState } from '@berth/session-domain';

/**
 * The read-model row each command's commit carries, as of its last event (`last_seq`, which
 * `berth store check` compares with the journal). Timestamps come from the journal's stamps.
 */
export function projectSessionRecord(state: SessionState, lastSeq: number, sessionId: string): SessionRecord {
  const view = deriveSessionView(state);
  const created = state.created_at ?? '';
  return {
    id: sessionId,
    owner_id: state.owner_id,
    agent_id: state.agent.id,
    agent_version: state.agent.version,
    environment_id: state.environment_id,
    title: state.title,
    metadata: state.metadata,
    status: view.status,
    view,
    last_seq: lastSeq,
    created_at: created,
    updated_at: state.updated_at ?? created,
    archived_at: state.archived ? (state.archived_at ?? state.updated_at ?? created) : null,
    deleted: state.lifecycle === 'DELETED',
  };
}
