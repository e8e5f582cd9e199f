/**
 * Another process writing to a SQLite store, as the services do while an operator takes a backup:
 * commits commands for a few sessions until killed, printing the number of commits as it goes.
 *
 *   node -r @swc-node/register libs/infra/store/src/testing/commit-loop.ts <db path> [sessions]
 */
import { commitOf } from '../contract/fixtures';
import { SqliteStore } from '../sqlite/sqlite-store';

async function main(): Promise<void> {
  const [path, sessionCount = '8'] = process.argv.slice(2);
  if (!path) throw new Error('usage: commit-loop.ts <db path> [sessions]');
  const store = new SqliteStore(path, { synchronous: 'normal' });
  await store.init();
  const next = new Map<string, number>();
  for (let n = 0; ; n++) {
    const sessionId = `sesn_${n % Number(sessionCount)}`;
    const from = next.get(sessionId) ?? 1;
    // Commands of one to three events, each with its snapshot and row, as the kernel commits them.
    const to = from + (n % 3);
    await store.journal.commit(commitOf(sessionId, from, to, { commandId: `cmd_${n}` }));
    await store.transcripts.append({ session_id: sessionId, path: 't.jsonl', offset: await store.transcripts.size(sessionId, 't.jsonl'), data: `{"n":${n}}\n` });
    next.set(sessionId, to + 1);
    if (n % 50 === 0) process.stdout.write(`${n}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`commit-loop failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
