import { ConcurrencyError, ValidationError } from '@berth/core';
import type { BerthStore, Page, SessionListQuery, SessionRecord } from '@berth/ports';
import { agent, at, batch, environment, seedSession, session } from './fixtures';

/** Follows next_page until the end, collecting ids (and proving every page honours the limit). */
async function allPages<T extends { id: string }>(fetch: (page: string | null) => Promise<Page<T>>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let page: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const result: Page<T> = await fetch(page);
    expect(result.data.length).toBeLessThanOrEqual(limit);
    ids.push(...result.data.map((r) => r.id));
    if (result.next_page === null) return ids;
    page = result.next_page;
  }
  throw new Error('pagination did not terminate');
}

export function readModelsContract(store: () => BerthStore): void {
  describe('sessions read model', () => {
    it("shows the row of the session's last commit, unchanged", async () => {
      const s = store();
      await seedSession(s, session({ id: 'sesn_1', status: 'running', last_seq: 3 }));
      const newer = session({ id: 'sesn_1', status: 'idle', last_seq: 4, title: 'renamed', metadata: { $key: 'a.b' }, view: { stop_reason: { type: 'end_turn' } } });
      await s.journal.commit({ sessionId: 'sesn_1', events: batch('sesn_1', 4, 4, 'cmd_rename'), record: newer });
      expect(await s.sessions.get('owner_a', 'sesn_1')).toEqual(newer);
    });

    it("answers nothing about another owner's sessions", async () => {
      const s = store();
      const { sessions } = s;
      const mine = session({ id: 'sesn_1' });
      await seedSession(s, mine);
      expect(await sessions.get('owner_b', 'sesn_1')).toBeNull();
      expect(await sessions.list('owner_b', { limit: 10 })).toEqual({ data: [], next_page: null });
      expect(await sessions.getById('sesn_1')).toEqual(mine);
      expect(await sessions.getById('sesn_missing')).toBeNull();
    });

    it('filters by agent, agent version, status, archival and creation time; never lists deleted sessions', async () => {
      const s = store();
      const { sessions } = s;
      const records: SessionRecord[] = [
        session({ id: 'sesn_1', created_at: at(1), agent_id: 'agent_1', agent_version: 1, status: 'idle' }),
        session({ id: 'sesn_2', created_at: at(2), agent_id: 'agent_1', agent_version: 2, status: 'running' }),
        session({ id: 'sesn_3', created_at: at(3), agent_id: 'agent_2', agent_version: 1, status: 'terminated' }),
        session({ id: 'sesn_4', created_at: at(4), agent_id: 'agent_1', agent_version: 2, status: 'idle', archived_at: at(5) }),
        session({ id: 'sesn_5', created_at: at(5), agent_id: 'agent_1', agent_version: 2, status: 'idle', deleted: true }),
      ];
      for (const r of records) await seedSession(s, r);
      const ids = async (q: Omit<SessionListQuery, 'limit'>) => (await sessions.list('owner_a', { limit: 50, order: 'asc', ...q })).data.map((s) => s.id);

      expect(await ids({})).toEqual(['sesn_1', 'sesn_2', 'sesn_3']);
      expect(await ids({ include_archived: true })).toEqual(['sesn_1', 'sesn_2', 'sesn_3', 'sesn_4']);
      expect(await ids({ agent_id: 'agent_1' })).toEqual(['sesn_1', 'sesn_2']);
      expect(await ids({ agent_id: 'agent_1', agent_version: 2, include_archived: true })).toEqual(['sesn_2', 'sesn_4']);
      expect(await ids({ statuses: ['idle', 'terminated'] })).toEqual(['sesn_1', 'sesn_3']);
      expect(await ids({ statuses: [] })).toEqual([]);
      expect(await ids({ created_at: { gte: at(2) } })).toEqual(['sesn_2', 'sesn_3']);
      expect(await ids({ created_at: { gt: at(1), lt: at(3) } })).toEqual(['sesn_2']);
      expect(await ids({ created_at: { lte: '2026-01-01T00:02:00Z' } })).toEqual(['sesn_1', 'sesn_2']);
      await expect(ids({ created_at: { gt: 'yesterday' } })).rejects.toBeInstanceOf(ValidationError);
    });

    it('pages through every session exactly once in both orders, newest first by default', async () => {
      const s = store();
      const { sessions } = s;
      // Two sessions share a creation time: the id breaks the tie so no page boundary drops one.
      const created = [at(1), at(2), at(2), at(3), at(4), at(5), at(6)];
      for (const [i, c] of created.entries()) await seedSession(s, session({ id: `sesn_${i + 1}`, created_at: c }));
      await seedSession(s, session({ id: 'sesn_other', owner_id: 'owner_b', created_at: at(3) }));
      const asc = ['sesn_1', 'sesn_2', 'sesn_3', 'sesn_4', 'sesn_5', 'sesn_6', 'sesn_7'];

      expect(await allPages((page) => sessions.list('owner_a', { limit: 2, order: 'asc', page }), 2)).toEqual(asc);
      expect(await allPages((page) => sessions.list('owner_a', { limit: 3, order: 'desc', page }), 3)).toEqual([...asc].reverse());
      expect(await allPages((page) => sessions.list('owner_a', { limit: 2, page }), 2)).toEqual([...asc].reverse());
      expect((await sessions.list('owner_a', { limit: 7, order: 'asc' })).next_page).toBeNull();
    });

    it('refuses a cursor reused with the other order, a forged cursor and a bad limit', async () => {
      const s = store();
      const { sessions } = s;
      for (const i of [1, 2, 3]) await seedSession(s, session({ id: `sesn_${i}`, created_at: at(i) }));
      const first = await sessions.list('owner_a', { limit: 1, order: 'asc' });
      expect(first.next_page).toEqual(expect.any(String));

      await expect(sessions.list('owner_a', { limit: 1, order: 'desc', page: first.next_page })).rejects.toBeInstanceOf(ValidationError);
      await expect(sessions.list('owner_a', { limit: 1, order: 'asc', page: 'not-a-cursor' })).rejects.toBeInstanceOf(ValidationError);
      await expect(sessions.list('owner_a', { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
      const agents = await store().agents.list('owner_a', { limit: 1, order: 'asc', page: first.next_page }).catch((e: unknown) => e);
      expect(agents).toBeInstanceOf(ValidationError);
    });
  });

  describe('agents', () => {
    it('adds versions only over the expected latest version', async () => {
      const { agents } = store();
      await agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0);
      await expect(agents.putVersion(agent({ id: 'agent_1', version: 1, name: 'again' }), 0)).rejects.toBeInstanceOf(ConcurrencyError);
      await agents.putVersion(agent({ id: 'agent_1', version: 2 }), 1);
      await expect(agents.putVersion(agent({ id: 'agent_1', version: 2, name: 'lost race' }), 1)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(agents.putVersion(agent({ id: 'agent_1', version: 4 }), 3)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(agents.putVersion(agent({ id: 'agent_1', version: 5 }), 2)).rejects.toBeInstanceOf(ValidationError);

      expect(await agents.get('owner_a', 'agent_1')).toEqual(agent({ id: 'agent_1', version: 2 }));
      expect(await agents.get('owner_a', 'agent_1', 1)).toEqual(agent({ id: 'agent_1', version: 1 }));
      expect(await agents.get('owner_a', 'agent_1', 3)).toBeNull();
    });

    it('lists versions in both orders with cursors, and the latest version of each agent', async () => {
      const { agents } = store();
      for (const v of [1, 2, 3]) await agents.putVersion(agent({ id: 'agent_1', version: v }), v - 1);
      await agents.putVersion(agent({ id: 'agent_2', version: 1, created_at: at(1) }), 0);

      const versions = async (order: 'asc' | 'desc') => {
        const seen: number[] = [];
        let page: string | null = null;
        do {
          const result: Awaited<ReturnType<typeof agents.listVersions>> = await agents.listVersions('owner_a', 'agent_1', { limit: 2, order, page });
          seen.push(...result.data.map((a) => a.version));
          page = result.next_page;
        } while (page);
        return seen;
      };
      expect(await versions('asc')).toEqual([1, 2, 3]);
      expect(await versions('desc')).toEqual([3, 2, 1]);

      const latest = await agents.list('owner_a', { limit: 10, order: 'asc' });
      expect(latest.data.map((a) => [a.id, a.version])).toEqual([
        ['agent_1', 3],
        ['agent_2', 1],
      ]);
    });

    it("hides another owner's agents and versions", async () => {
      const { agents } = store();
      await agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0);
      expect(await agents.get('owner_b', 'agent_1')).toBeNull();
      expect(await agents.get('owner_b', 'agent_1', 1)).toBeNull();
      expect((await agents.listVersions('owner_b', 'agent_1', { limit: 10 })).data).toEqual([]);
      expect((await agents.list('owner_b', { limit: 10 })).data).toEqual([]);
      await expect(agents.putVersion(agent({ id: 'agent_1', version: 2, owner_id: 'owner_b' }), 1)).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await agents.archive('owner_b', 'agent_1', at(9))).toBeNull();
      expect((await agents.get('owner_a', 'agent_1'))?.archived_at).toBeNull();
    });

    it('archives an agent: every version shows it, and lists skip it unless asked', async () => {
      const { agents } = store();
      await agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0);
      await agents.putVersion(agent({ id: 'agent_1', version: 2 }), 1);
      await agents.putVersion(agent({ id: 'agent_2', version: 1 }), 0);

      const archived = await agents.archive('owner_a', 'agent_1', at(30));
      expect(archived).toEqual({ ...agent({ id: 'agent_1', version: 2 }), archived_at: at(30), updated_at: at(30) });
      expect((await agents.get('owner_a', 'agent_1', 1))?.archived_at).toBe(at(30));
      expect((await agents.list('owner_a', { limit: 10 })).data.map((a) => a.id)).toEqual(['agent_2']);
      expect((await agents.list('owner_a', { limit: 10, include_archived: true })).data.map((a) => a.id).sort()).toEqual(['agent_1', 'agent_2']);
    });
  });

  describe('environments', () => {
    it('puts, replaces and gets environments, scoped to their owner', async () => {
      const { environments } = store();
      await environments.put(environment({ id: 'env_1' }));
      const renamed = environment({ id: 'env_1', name: 'renamed', metadata: { team: 'infra' }, updated_at: at(3) });
      await environments.put(renamed);
      expect(await environments.get('owner_a', 'env_1')).toEqual(renamed);
      expect(await environments.get('owner_b', 'env_1')).toBeNull();
      expect(await environments.get('owner_a', 'env_missing')).toBeNull();
      expect((await environments.list('owner_b', { limit: 10 })).data).toEqual([]);
    });

    it('inserts a new id only: an id already stored, any owner’s, is a ConcurrencyError and changes nothing', async () => {
      const { environments } = store();
      const first = environment({ id: 'env_1' });
      await environments.insert(first);
      expect(await environments.get('owner_a', 'env_1')).toEqual(first);
      for (const again of [environment({ id: 'env_1', name: 'again' }), environment({ id: 'env_1', owner_id: 'owner_b' })]) {
        await expect(environments.insert(again)).rejects.toBeInstanceOf(ConcurrencyError);
      }
      expect(await environments.get('owner_a', 'env_1')).toEqual(first);
      expect(await environments.get('owner_b', 'env_1')).toBeNull();
    });

    it('lists in pages, skipping archived unless asked and deleted always', async () => {
      const { environments } = store();
      for (const i of [1, 2, 3, 4]) await environments.put(environment({ id: `env_${i}`, created_at: at(i) }));
      await environments.put(environment({ id: 'env_5', created_at: at(5), archived_at: at(6) }));
      await environments.put(environment({ id: 'env_6', created_at: at(6), deleted: true }));

      expect(await allPages((page) => environments.list('owner_a', { limit: 3, order: 'asc', page }), 3)).toEqual(['env_1', 'env_2', 'env_3', 'env_4']);
      expect(await allPages((page) => environments.list('owner_a', { limit: 2, order: 'desc', page, include_archived: true }), 2)).toEqual([
        'env_5',
        'env_4',
        'env_3',
        'env_2',
        'env_1',
      ]);
    });
  });
}
