/**
 * `_id` order is commit order within a process, but two processes appending to one session in the
 * same second may mint ObjectIds out of seq order. Keep the page's interleaving of sessions and put
 * each session's events back in seq order within it.
 */
export function inSeqOrderPerSession<T extends { session_id: string; seq: number }>(docs: readonly T[]): T[] {
  const bySession = new Map<string, T[]>();
  for (const d of docs) bySession.set(d.session_id, [...(bySession.get(d.session_id) ?? []), d]);
  for (const list of bySession.values()) list.sort((a, b) => a.seq - b.seq);
  return docs.map((d) => bySession.get(d.session_id)?.shift() as T);
}
