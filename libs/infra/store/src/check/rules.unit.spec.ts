import { agentFindings, outboxFindings, sessionFindings, transcriptFindings } from './rules';

const healthy = { session_id: 'sesn_1', journal: { events: 5, first_seq: 1, last_seq: 5 }, snapshot_version: 5, record_last_seq: 5 };
const kinds = (findings: { kind: string; severity: string }[]) => findings.map((f) => `${f.severity} ${f.kind}`);

describe('store check rules', () => {
  it('finds nothing wrong with a session whose snapshot and row agree with its journal, or whose snapshot lags', () => {
    expect(sessionFindings(healthy)).toEqual([]);
    expect(sessionFindings({ ...healthy, snapshot_version: 2 })).toEqual([]);
    expect(sessionFindings({ ...healthy, snapshot_version: null })).toEqual([]);
  });

  it('reports a journal with missing events, wherever they are', () => {
    expect(kinds(sessionFindings({ ...healthy, journal: { events: 4, first_seq: 1, last_seq: 5 } }))).toEqual(['error journal_gap']);
    expect(kinds(sessionFindings({ ...healthy, journal: { events: 3, first_seq: 3, last_seq: 5 } }))).toEqual(['error journal_gap']);
    expect(sessionFindings({ ...healthy, journal: { events: 4, first_seq: 1, last_seq: 5 } })[0]?.detail).toMatch(/1 of seqs 1\.\.5 are missing/);
  });

  it('reports a snapshot or row past the journal, a row behind it, and a missing row or journal', () => {
    expect(kinds(sessionFindings({ ...healthy, snapshot_version: 7 }))).toEqual(['warning snapshot_ahead']);
    expect(kinds(sessionFindings({ ...healthy, record_last_seq: 9 }))).toEqual(['warning row_ahead']);
    expect(kinds(sessionFindings({ ...healthy, record_last_seq: 3 }))).toEqual(['warning row_behind']);
    expect(kinds(sessionFindings({ ...healthy, record_last_seq: null }))).toEqual(['error row_missing']);
    const orphan = sessionFindings({ ...healthy, journal: null });
    expect(kinds(orphan)).toEqual(['error journal_missing']);
    expect(orphan[0]?.detail).toBe('the session has a snapshot at seq 5 and a read-model row at seq 5 but no events in the journal');
    expect(orphan[0]?.fix).toMatch(/docs\/deploy\.md/);
  });

  it('reports a transcript mirror with a hole or a missing start', () => {
    const file = { session_id: 'sesn_1', path: 'h.jsonl', pieces: 3, first_offset: 0, bytes: 30, end: 30 };
    expect(transcriptFindings(file)).toEqual([]);
    expect(kinds(transcriptFindings({ ...file, bytes: 20 }))).toEqual(['error transcript_gap']);
    expect(kinds(transcriptFindings({ ...file, first_offset: 10, bytes: 20 }))).toEqual(['error transcript_gap']);
  });

  it('reports an agent missing versions or its head', () => {
    expect(agentFindings({ agent_id: 'agent_1', latest_version: 3, versions: 3, max_version: 3 })).toEqual([]);
    expect(kinds(agentFindings({ agent_id: 'agent_1', latest_version: 3, versions: 2, max_version: 3 }))).toEqual(['error agent_versions_missing']);
    expect(kinds(agentFindings({ agent_id: 'agent_1', latest_version: 3, versions: 2, max_version: 2 }))).toEqual(['error agent_versions_missing']);
    expect(kinds(agentFindings({ agent_id: 'agent_1', latest_version: null, versions: 2, max_version: 2 }))).toEqual(['error agent_head_missing']);
  });

  it('reports outbox entries whose events are gone, not a backlog', () => {
    expect(outboxFindings({ events: 40, oldest_occurred_at: '2026-01-01T00:00:00.000Z', dangling: 0 })).toEqual([]);
    expect(kinds(outboxFindings({ events: 40, oldest_occurred_at: null, dangling: 2 }))).toEqual(['warning outbox_dangling']);
  });
});
