import type { RecordedEvent } from '@berth/contracts';
import type { SessionJournal, SessionReadModel, SessionRecord, SessionSnapshot, SessionSnapshots } from '@berth/ports';
import { evolve, initialState, type SessionState } from '@berth/session-domain';
import { projectSessionRecord } from './session-record';
import { snapshotSession } from './snapshot-envelope';

/** One place where what is stored is not what the journal folds to. `path` is a dotted JSON path ('' = the whole value). */
export type ReplayDifference = Readonly<{ where: 'journal' | 'snapshot' | 'read_model'; path: string; stored: unknown; replayed: unknown }>;

/**
 * What `berth replay` found for one session. A snapshot may lag the journal (it is a best-effort
 * cache) and may be in an older format (the kernel then folds from zero): neither is a difference,
 * but a lagging snapshot must equal the fold up to its own version. The read model is what the API
 * serves, so one that lags the journal is a difference.
 */
export type ReplayReport = Readonly<{
  session_id: string;
  last_seq: number;
  snapshot: Readonly<{ status: 'absent' | 'old_format' | 'compared'; version: number | null }>;
  read_model: Readonly<{ status: 'absent' | 'compared'; last_seq: number | null }>;
  differences: readonly ReplayDifference[];
}>;

export type ReplayInput = Readonly<{ sessionId: string; events: readonly RecordedEvent[]; snapshot: SessionSnapshot | null; record: SessionRecord | null }>;

/** Folds the journal from zero with the production `evolve` and compares the stored snapshot and read model with it. Pure. */
export function auditSession(input: ReplayInput): ReplayReport {
  const { sessionId, events, snapshot, record } = input;
  const differences: ReplayDifference[] = [];
  events.forEach((event, index) => {
    if (event.seq !== index + 1) differences.push({ where: 'journal', path: `[${index}].seq`, stored: event.seq, replayed: index + 1 });
  });
  const lastSeq = events.length > 0 ? events[events.length - 1].seq : 0;
  const stateAt = (seq: number): SessionState => events.filter((e) => e.seq <= seq).reduce<SessionState>(evolve, initialState());

  let snapshotStatus: ReplayReport['snapshot']['status'] = 'absent';
  if (snapshot !== null) {
    const stored = snapshotSession(snapshot);
    snapshotStatus = stored === null ? 'old_format' : 'compared';
    if (snapshot.version > lastSeq) differences.push({ where: 'snapshot', path: 'version', stored: snapshot.version, replayed: lastSeq });
    else if (stored !== null) differences.push(...diffJson(stored, stateAt(snapshot.version)).map((d) => ({ where: 'snapshot' as const, ...d })));
  }

  const replayed = stateAt(lastSeq);
  if (record === null) {
    if (replayed.exists) differences.push({ where: 'read_model', path: '', stored: null, replayed: projectSessionRecord(replayed, lastSeq, sessionId) });
  } else if (record.last_seq > lastSeq) {
    differences.push({ where: 'read_model', path: 'last_seq', stored: record.last_seq, replayed: lastSeq });
  } else {
    // A row behind the journal is reported once (its last_seq); its content is checked against the fold at its own seq.
    const at = record.last_seq === lastSeq ? replayed : stateAt(record.last_seq);
    if (record.last_seq < lastSeq) differences.push({ where: 'read_model', path: 'last_seq', stored: record.last_seq, replayed: lastSeq });
    else differences.push(...diffJson(record, projectSessionRecord(at, record.last_seq, sessionId)).map((d) => ({ where: 'read_model' as const, ...d })));
  }

  return {
    session_id: sessionId,
    last_seq: lastSeq,
    snapshot: { status: snapshotStatus, version: snapshot?.version ?? null },
    read_model: { status: record === null ? 'absent' : 'compared', last_seq: record?.last_seq ?? null },
    differences,
  };
}

export type ReplaySources = Readonly<{ journal: SessionJournal; snapshots: SessionSnapshots; sessions: SessionReadModel }>;

/**
 * Reads one session's read-model row, snapshot and journal, and audits them (writes nothing). On a
 * live install a command may commit between the reads; the row and snapshot are read first, so the
 * journal is never behind them, and the reads are repeated (a few times) while the journal moved on.
 */
export async function replaySession(store: ReplaySources, sessionId: string): Promise<ReplayReport> {
  for (let attempt = 1; ; attempt++) {
    const [record, snapshot] = await Promise.all([store.sessions.getById(sessionId), store.snapshots.load(sessionId)]);
    const events = await store.journal.readEvents(sessionId, { order: 'asc' });
    const lastSeq = events.length > 0 ? events[events.length - 1].seq : 0;
    if ((record?.last_seq ?? 0) >= lastSeq || attempt === READ_ATTEMPTS) return auditSession({ sessionId, events, snapshot, record });
  }
}

const READ_ATTEMPTS = 3;

type Leaf = Readonly<{ path: string; stored: unknown; replayed: unknown }>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const join = (path: string, key: string | number): string => (typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`);

/** Leaf-level differences between two JSON values, compared as stored (a JSON round trip drops undefined fields). */
export function diffJson(stored: unknown, replayed: unknown): Leaf[] {
  const out: Leaf[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isObject(a) && isObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], join(path, key));
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((item, i) => walk(item, b[i], join(path, i)));
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push({ path, stored: a, replayed: b });
    }
  };
  walk(asStored(stored), asStored(replayed), '');
  return out;
}

const asStored = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
