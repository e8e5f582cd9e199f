import { backupStore, checkStore } from '@berth/store';
import { ReportedFailure } from '../exit-codes';
import { DEFAULT_STORE_URL, openExistingStore } from '../local/existing-store';
import { details } from '../output/format';
import type { OptionValues } from '../args';
import { str, type Command, type Context } from './command';

/**
 * Store maintenance on the server machine, straight against the store (no API): a consistency
 * check and an online backup.
 */

const storeOption = { store: { type: 'string', help: `store URL (default: $BERTH_STORE_URL, else ${DEFAULT_STORE_URL})` } } as const;

const storeUrl = (ctx: Context, o: OptionValues): string => str(o, 'store') ?? ctx.env.BERTH_STORE_URL ?? DEFAULT_STORE_URL;
const redacted = (url: string): string => url.replace(/\/\/[^@/]*@/, '//***@');

export const storeCommands: readonly Command[] = [
  {
    name: ['store', 'check'],
    args: [],
    options: storeOption,
    summary: 'check the store for sessions, transcripts and agents that disagree with their journal (exit 1 if any)',
    local: true,
    run: async (ctx, _a, o) => {
      const url = storeUrl(ctx, o);
      const store = await openExistingStore(url);
      ctx.io.err(`checking ${redacted(url)} …`);
      try {
        const report = await checkStore(store.inspection, { progress: (what, n) => ctx.io.err(`  ${n} ${what} checked …`) });
        const { sessions, transcripts, agents } = report.checked;
        const summary = [
          details([
            ['store', redacted(url)],
            ['checked', `${sessions} session(s), ${transcripts} transcript file(s), ${agents} agent(s)`],
            ['outbox', report.outbox.events === 0 ? 'empty' : `${report.outbox.events} event(s) waiting since ${report.outbox.oldest_occurred_at} (the session-kernel's relay publishes them)`],
          ]),
          report.findings.length === 0 ? 'no problems found' : `${report.findings.length} problem(s):`,
          ...report.findings.map((f) => `\n${f.severity.toUpperCase()} ${f.kind}  ${f.subject}\n  ${f.detail}\n  what to do: ${f.fix}`),
        ];
        const output = { json: report, human: summary.join('\n') };
        if (report.findings.length > 0) throw new ReportedFailure(output);
        return output;
      } finally {
        await store.close();
      }
    },
  },
  {
    name: ['store', 'backup'],
    args: ['file'],
    options: storeOption,
    summary: 'write a consistent copy of a SQLite store to a new file while the platform runs',
    local: true,
    run: async (ctx, a, o) => {
      const result = await backupStore(storeUrl(ctx, o), a.file as string);
      return { json: result, human: details([['backup', result.path], ['bytes', result.bytes], ['restore', 'stop every service, replace the database file with this copy (remove its -wal and -shm files), start; then berth store check']]) };
    },
  },
];
