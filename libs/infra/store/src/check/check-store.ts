import type { OutboxBacklog, StoreInspection } from '@berth/ports';
import { agentFindings, outboxFindings, sessionFindings, transcriptFindings, type Finding } from './rules';

export type StoreReport = Readonly<{
  checked: Readonly<{ sessions: number; transcripts: number; agents: number }>;
  outbox: OutboxBacklog;
  findings: readonly Finding[];
}>;

export type CheckOptions = Readonly<{ pageSize?: number; progress?: (what: 'sessions' | 'transcripts' | 'agents', checked: number) => void }>;

/** Pages through the store's inspection (each page one consistent read) and applies the rules. */
export async function checkStore(inspection: StoreInspection, options: CheckOptions = {}): Promise<StoreReport> {
  const pageSize = options.pageSize ?? 500;
  const progress = options.progress ?? (() => undefined);
  const findings: Finding[] = [];

  async function walk<T, K>(what: 'sessions' | 'transcripts' | 'agents', read: (after: K | null) => Promise<readonly T[]>, keyOf: (row: T) => K, rules: (row: T) => Finding[]): Promise<number> {
    let checked = 0;
    for (let after: K | null = null; ; ) {
      const page = await read(after);
      checked += page.length;
      for (const row of page) findings.push(...rules(row));
      const last = page[page.length - 1];
      if (last === undefined || page.length < pageSize) return checked;
      progress(what, checked);
      after = keyOf(last);
    }
  }

  const sessions = await walk('sessions', (after: string | null) => inspection.sessionPositions(after, pageSize), (p) => p.session_id, sessionFindings);
  const transcripts = await walk(
    'transcripts',
    (after: { session_id: string; path: string } | null) => inspection.transcriptExtents(after, pageSize),
    (t) => ({ session_id: t.session_id, path: t.path }),
    transcriptFindings,
  );
  const agents = await walk('agents', (after: string | null) => inspection.agentExtents(after, pageSize), (a) => a.agent_id, agentFindings);
  const outbox = await inspection.outboxBacklog();
  findings.push(...outboxFindings(outbox));
  return { checked: { sessions, transcripts, agents }, outbox, findings };
}
