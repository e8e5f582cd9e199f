import type { AgentExtent, OutboxBacklog, SessionPosition, TranscriptExtent } from '@berth/ports';

/** One thing `berth store check` found, with what it means for users and what to do about it. */
export type Finding = Readonly<{
  kind:
    | 'journal_gap'
    | 'journal_missing'
    | 'snapshot_ahead'
    | 'row_missing'
    | 'row_ahead'
    | 'row_behind'
    | 'transcript_gap'
    | 'agent_head_missing'
    | 'agent_versions_missing'
    | 'outbox_dangling';
  /** `error`: data is lost or unusable; `warning`: Berth works around it, but the store was restored inconsistently. */
  severity: 'error' | 'warning';
  /** A session id, `<session id> <path>` for a transcript file, an agent id, or `outbox`. */
  subject: string;
  detail: string;
  fix: string;
}>;

const RESTORE = 'Restore the whole store from one consistent backup (docs/deploy.md → Backups).';
const restore = 'restore the whole store from one consistent backup (docs/deploy.md → Backups).';

/**
 * The journal is the only source of truth for a session's position; everything else must agree
 * with it. A mismatch only arises from a store restored from an inconsistent copy, or edited by
 * hand: every commit writes the journal, snapshot and row together.
 */
export function sessionFindings(p: SessionPosition): Finding[] {
  const subject = p.session_id;
  const { journal } = p;
  if (journal === null) {
    const has = [p.snapshot_version !== null ? `a snapshot at seq ${p.snapshot_version}` : null, p.record_last_seq !== null ? `a read-model row at seq ${p.record_last_seq}` : null].filter(Boolean);
    return [
      {
        kind: 'journal_missing',
        severity: 'error',
        subject,
        detail: `the session has ${has.join(' and ')} but no events in the journal`,
        fix: `Its history is gone: commands to it cannot be decided. ${RESTORE}`,
      },
    ];
  }
  const findings: Finding[] = [];
  const span = journal.last_seq - journal.first_seq + 1;
  if (journal.first_seq !== 1 || journal.events !== span) {
    findings.push({
      kind: 'journal_gap',
      severity: 'error',
      subject,
      detail: `the journal holds ${journal.events} event(s) between seq ${journal.first_seq} and ${journal.last_seq}; ${journal.last_seq - journal.events} of seqs 1..${journal.last_seq} are missing`,
      fix: `Replays and the folded state skip the missing events, so the session's state is wrong. ${RESTORE}`,
    });
  }
  if (p.snapshot_version !== null && p.snapshot_version > journal.last_seq) {
    findings.push({
      kind: 'snapshot_ahead',
      severity: 'warning',
      subject,
      detail: `the snapshot is at seq ${p.snapshot_version}, past the journal's last seq ${journal.last_seq}`,
      fix: `The kernel ignores a snapshot ahead of the journal and folds the journal instead; the session's next command replaces it. Events after seq ${journal.last_seq} that clients may have seen are not in the store: if they matter, ${restore}`,
    });
  }
  if (p.record_last_seq === null) {
    findings.push({
      kind: 'row_missing',
      severity: 'error',
      subject,
      detail: `the journal holds seqs up to ${journal.last_seq} but the session has no read-model row`,
      fix: `The API answers 404 for the session until a command to it commits a row. ${RESTORE}`,
    });
  } else if (p.record_last_seq !== journal.last_seq) {
    const ahead = p.record_last_seq > journal.last_seq;
    findings.push({
      kind: ahead ? 'row_ahead' : 'row_behind',
      severity: 'warning',
      subject,
      detail: `the read-model row is at seq ${p.record_last_seq}, the journal at ${journal.last_seq}`,
      fix: `GET and list show a state ${ahead ? 'the journal does not have' : 'older than the journal'} until the session's next command rewrites the row. If this follows a restore, ${restore}`,
    });
  }
  return findings;
}

/** A mirrored transcript is one run of bytes from offset 0; a hole would hand a new sandbox a broken file. */
export function transcriptFindings(t: TranscriptExtent): Finding[] {
  if (t.first_offset === 0 && t.bytes === t.end) return [];
  return [
    {
      kind: 'transcript_gap',
      severity: 'error',
      subject: `${t.session_id} ${t.path}`,
      detail: `the mirror holds ${t.bytes} byte(s) in ${t.pieces} piece(s) but spans ${t.first_offset}..${t.end}`,
      fix: `A new sandbox would restore a broken transcript, so the harness cannot resume this conversation. ${RESTORE}`,
    },
  ];
}

/** An agent's head names its latest version; versions 1..latest are each stored. */
export function agentFindings(a: AgentExtent): Finding[] {
  if (a.latest_version === null) {
    return [
      {
        kind: 'agent_head_missing',
        severity: 'error',
        subject: a.agent_id,
        detail: `${a.versions} version(s) are stored but the agent itself is not`,
        fix: `The API answers 404 for this agent and its versions. ${RESTORE}`,
      },
    ];
  }
  if (a.versions === a.latest_version && a.max_version === a.latest_version) return [];
  return [
    {
      kind: 'agent_versions_missing',
      severity: 'error',
      subject: a.agent_id,
      detail: `the agent is at version ${a.latest_version} but ${a.versions} version(s) are stored (highest ${a.max_version})`,
      fix: `Sessions pinned to a missing version cannot start a sandbox, and the agent's latest config may be unreadable. ${RESTORE}`,
    },
  ];
}

export function outboxFindings(b: OutboxBacklog): Finding[] {
  if (b.dangling === 0) return [];
  return [
    {
      kind: 'outbox_dangling',
      severity: 'warning',
      subject: 'outbox',
      detail: `${b.dangling} outbox entr${b.dangling === 1 ? 'y points' : 'ies point'} at events that are not in the journal`,
      fix: `The outbox relay drops such entries as it meets them. They come from a restore that was not point-in-time: ${restore}`,
    },
  ];
}
