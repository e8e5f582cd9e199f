import type { AgentExtent, OutboxBacklog, SessionPosition, StoreInspection, TranscriptExtent } from '@berth/ports';
import { checkLimit } from '@berth/store/shared';
import type { MemoryAgents } from './memory-agents';
import type { MemoryJournal } from './memory-journal';
import type { MemorySessions } from './memory-sessions';
import type { MemorySnapshots } from './memory-snapshots';
import type { MemoryTranscripts } from './memory-transcripts';

type Parts = Readonly<{ journal: MemoryJournal; snapshots: MemorySnapshots; sessions: MemorySessions; agents: MemoryAgents; transcripts: MemoryTranscripts }>;

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The inspection over the in-memory parts, computed on each call (reads are atomic in one process). */
export class MemoryInspection implements StoreInspection {
  constructor(private readonly parts: Parts) {}

  async sessionPositions(after: string | null, limit: number): Promise<readonly SessionPosition[]> {
    const { journal, snapshots, sessions } = this.parts;
    const rows = journal.sessions();
    const ids = [...new Set([...rows.keys(), ...snapshots.ids(), ...sessions.ids()])]
      .filter((id) => after === null || id > after)
      .sort(byKey)
      .slice(0, checkLimit(limit));
    return ids.map((session_id) => {
      const seqs = (rows.get(session_id) ?? []).map((r) => r.event.seq);
      return {
        session_id,
        journal: seqs.length > 0 ? { events: seqs.length, first_seq: Math.min(...seqs), last_seq: Math.max(...seqs) } : null,
        snapshot_version: snapshots.version(session_id),
        record_last_seq: sessions.lastSeq(session_id),
      };
    });
  }

  async transcriptExtents(after: Readonly<{ session_id: string; path: string }> | null, limit: number): Promise<readonly TranscriptExtent[]> {
    return this.parts.transcripts
      .all()
      .filter((f) => after === null || f.session_id > after.session_id || (f.session_id === after.session_id && f.path > after.path))
      .sort((a, b) => byKey(a.session_id, b.session_id) || byKey(a.path, b.path))
      .slice(0, checkLimit(limit))
      .map(({ session_id, path, pieces }) => ({
        session_id,
        path,
        pieces: pieces.length,
        first_offset: Math.min(...pieces.map((p) => p.offset)),
        bytes: pieces.reduce((n, p) => n + p.bytes, 0),
        end: Math.max(...pieces.map((p) => p.offset + p.bytes)),
      }));
  }

  async agentExtents(after: string | null, limit: number): Promise<readonly AgentExtent[]> {
    return this.parts.agents
      .extents()
      .filter((a) => after === null || a.agent_id > after)
      .sort((a, b) => byKey(a.agent_id, b.agent_id))
      .slice(0, checkLimit(limit));
  }

  async outboxBacklog(): Promise<OutboxBacklog> {
    const pending = [...this.parts.journal.sessions().values()].flat().filter((r) => !r.published);
    const oldest = pending.map((r) => r.event.occurred_at).sort()[0] ?? null;
    return { events: pending.length, oldest_occurred_at: oldest, dangling: 0 };
  }
}
