import { replaySession, type ReplayReport } from '@berth/session-kernel';
import type { BerthStore } from '@berth/ports';
import { ApiError, ReportedFailure, UsageError } from '../exit-codes';
import { DEFAULT_STORE_URL, openExistingStore } from '../local/existing-store';
import { str, type Command } from './command';

const shown = (value: unknown): string => (value === undefined ? '(absent)' : JSON.stringify(value));

export function renderReplay(report: ReplayReport): string {
  const snapshot = report.snapshot.status === 'compared' ? `snapshot at #${report.snapshot.version}` : `snapshot ${report.snapshot.status.replace('_', ' ')}`;
  const row = report.read_model.status === 'compared' ? `read model at #${report.read_model.last_seq}` : 'no read model row';
  const head = `${report.session_id}: ${report.last_seq} events, ${snapshot}, ${row}: `;
  if (report.differences.length === 0) return `${head}no difference`;
  const lines = report.differences.map((d) => `  ${d.where} ${d.path || '(whole)'}: stored ${shown(d.stored)}, replayed ${shown(d.replayed)}`);
  return [`${head}${report.differences.length} difference${report.differences.length === 1 ? '' : 's'}`, ...lines].join('\n');
}

/** Every session of one owner the read model lists, archived ones included (deleted ones are not listed). */
async function sessionIdsOf(store: BerthStore, ownerId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page: string | null = null; ; ) {
    const result = await store.sessions.list(ownerId, { limit: 100, page, order: 'asc', include_archived: true });
    ids.push(...result.data.map((s) => s.id));
    if (result.next_page === null) return ids;
    page = result.next_page;
  }
}

export const replayCommands: readonly Command[] = [
  {
    name: ['replay'],
    args: ['session'],
    options: {
      owner: { type: 'string', help: 'with session "all": replay every session of this owner' },
      store: { type: 'string', help: `store URL (default: $BERTH_STORE_URL, else ${DEFAULT_STORE_URL})` },
    },
    summary: 'fold a session journal from zero and compare with its stored snapshot and read model (run on the server machine)',
    local: true,
    run: async (ctx, a, o) => {
      const owner = str(o, 'owner');
      if (a.session === 'all' && owner === undefined) throw new UsageError('replay all needs --owner <owner-id>');
      const store = await openExistingStore(str(o, 'store') ?? ctx.env.BERTH_STORE_URL ?? DEFAULT_STORE_URL);
      try {
        const ids = a.session === 'all' ? await sessionIdsOf(store, owner as string) : [a.session];
        const reports: ReplayReport[] = [];
        for (const id of ids) reports.push(await replaySession(store, id));
        const unknown = reports.filter((r) => r.last_seq === 0 && r.read_model.status === 'absent');
        if (a.session !== 'all' && unknown.length > 0) throw new ApiError(404, 'not_found_error', `no session ${a.session} in this store`, 'NOT_FOUND');
        const output = {
          json: { ok: reports.every((r) => r.differences.length === 0), sessions: reports },
          human: reports.length === 0 ? `no sessions of owner ${owner}` : reports.map(renderReplay).join('\n'),
        };
        if (!output.json.ok) throw new ReportedFailure(output);
        return output;
      } finally {
        await store.close();
      }
    },
  },
];
