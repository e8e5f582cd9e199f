import { ErrorCodes } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { AgentRecord, BerthStore } from '@berth/ports';
import { StoreLimits } from '../shared/limits';
import { agent, commitOf, environment, event } from './fixtures';

const MiB = 1024 * 1024;

/** A system prompt of `chars` characters (a few of them multi-byte), different for each version. */
const systemPrompt = (version: number, chars: number): string => `v${version} ✓ ${'You are a careful engineer. '.repeat(Math.ceil(chars / 28))}`.slice(0, chars);

/** JSON Lines of a harness transcript, `bytes` long in UTF-8 (multi-byte characters included). */
function transcript(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `${JSON.stringify({ type: i % 2 ? 'assistant' : 'user', n: i, text: `héllo ✓ ${'x'.repeat(200)}` })}\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  return lines.join('');
}

const isTooLarge = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown; status?: unknown }).code === ErrorCodes.PAYLOAD_TOO_LARGE && (e as { status?: unknown }).status === 413;

/**
 * Sizes that break a store keeping one document per agent or per transcript chunk (MongoDB's
 * 16 MiB document limit), and the clear 413 where a real limit remains.
 */
export function limitsContract(store: () => BerthStore): void {
  describe('sizes', () => {
    it('keeps 500 versions of an agent with a 100,000-character system prompt, each readable and listed', async () => {
      const { agents } = store();
      const withPrompt = (version: number): AgentRecord => agent({ id: 'agent_big', version, config: { model: 'claude-sonnet-4-5', system: systemPrompt(version, 100_000), tools: [] } });
      for (let v = 1; v <= 500; v++) await agents.putVersion(withPrompt(v), v - 1);

      expect(await agents.get('owner_a', 'agent_big')).toEqual(withPrompt(500));
      expect(await agents.get('owner_a', 'agent_big', 1)).toEqual(withPrompt(1));
      expect((await agents.get('owner_a', 'agent_big', 250))?.config.system).toBe(systemPrompt(250, 100_000));
      const seen: number[] = [];
      for (let page: string | null = null, guard = 0; guard < 10; guard++) {
        const result: Awaited<ReturnType<typeof agents.listVersions>> = await agents.listVersions('owner_a', 'agent_big', { limit: 100, order: 'asc', page });
        seen.push(...result.data.map((a) => a.version));
        page = result.next_page;
        if (page === null) break;
      }
      expect(seen).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
      expect((await agents.list('owner_a', { limit: 10 })).data.map((a) => [a.id, a.version])).toEqual([['agent_big', 500]]);
      // And it can still be updated.
      await agents.putVersion(withPrompt(501), 500);
      expect((await agents.get('owner_a', 'agent_big'))?.version).toBe(501);
    }, 180_000);

    it('mirrors a 20 MB transcript, re-reads it byte for byte and keeps appending to it', async () => {
      const { transcripts } = store();
      const big = transcript(20 * 1000 * 1000);
      const bytes = Buffer.byteLength(big);
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/-workspace/h.jsonl', offset: 0, data: big });
      expect(await transcripts.size('sesn_1', 'projects/-workspace/h.jsonl')).toBe(bytes);
      // A repeat of what is stored is a no-op; the next line lands after it.
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/-workspace/h.jsonl', offset: 0, data: big });
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/-workspace/h.jsonl', offset: bytes, data: '{"type":"user","text":"ünd weiter"}\n' });
      const [file] = await transcripts.files('sesn_1');
      expect(file?.data.length).toBe(big.length + '{"type":"user","text":"ünd weiter"}\n'.length);
      expect(file?.data === `${big}{"type":"user","text":"ünd weiter"}\n`).toBe(true);
    }, 120_000);

    it('refuses an agent version too large to store with a 413, and the agent stays updatable', async () => {
      const { agents } = store();
      await agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0);
      const huge = agent({ id: 'agent_1', version: 2, config: { model: 'm', system: 'x'.repeat(StoreLimits.recordBytes) } });
      const refused = await agents.putVersion(huge, 1).catch((e: unknown) => e);
      expect(isTooLarge(refused)).toBe(true);
      expect((await agents.get('owner_a', 'agent_1'))?.version).toBe(1);
      await agents.putVersion(agent({ id: 'agent_1', version: 2 }), 1);
      expect((await agents.get('owner_a', 'agent_1'))?.version).toBe(2);
    });

    it('refuses an environment too large to store with a 413', async () => {
      const { environments } = store();
      const refused = await environments.put(environment({ id: 'env_1', metadata: { blob: 'x'.repeat(StoreLimits.recordBytes) } })).catch((e: unknown) => e);
      expect(isTooLarge(refused)).toBe(true);
      expect(await environments.get('owner_a', 'env_1')).toBeNull();
    });

    it('refuses a commit holding an event too large to store with a 413, writing nothing', async () => {
      const { journal, sessions } = store();
      const huge = { ...event('sesn_1', 1, 'cmd_big'), data: { turn_id: 'x'.repeat(StoreLimits.recordBytes) } } as RecordedEvent;
      const refused = await journal.commit({ ...commitOf('sesn_1', 1, 1, { commandId: 'cmd_big' }), events: [huge] }).catch((e: unknown) => e);
      expect(isTooLarge(refused)).toBe(true);
      expect(await journal.lastSeq('sesn_1')).toBe(0);
      expect(await sessions.getById('sesn_1')).toBeNull();
    });

    it('commits without a snapshot too large to store: the older one lags and the journal tail catches it up', async () => {
      const { journal, snapshots } = store();
      await journal.commit(commitOf('sesn_1', 1, 1));
      const large = commitOf('sesn_1', 2, 3, { commandId: 'cmd_queue' });
      await journal.commit({ ...large, snapshot: { ...large.snapshot!, state: { queued: 'q'.repeat(StoreLimits.recordBytes + MiB) } } });
      expect(await journal.lastSeq('sesn_1')).toBe(3);
      const snapshot = await snapshots.load('sesn_1');
      expect(snapshot?.version).toBe(1);
      expect((await journal.readEvents('sesn_1', { afterSeq: snapshot?.version })).map((e) => e.seq)).toEqual([2, 3]);
    });
  });
}
