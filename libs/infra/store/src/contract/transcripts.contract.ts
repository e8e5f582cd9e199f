import { ValidationError } from '@berth/core';
import type { BerthStore } from '@berth/ports';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export function transcriptsContract(store: () => BerthStore): void {
  describe('transcript mirror', () => {
    it('appends chunks idempotently by offset and reassembles each file', async () => {
      const { transcripts } = store();
      const line1 = '{"type":"user","text":"héllo"}\n';
      const line2 = '{"type":"assistant","text":"✓ done"}\n';
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/a/s.jsonl', offset: 0, data: line1 });
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/a/s.jsonl', offset: 0, data: line1 });
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/a/s.jsonl', offset: bytes(line1), data: line2 });
      await transcripts.append({ session_id: 'sesn_1', path: 'projects/a/s.jsonl', offset: bytes(line1), data: line2 });
      await transcripts.append({ session_id: 'sesn_1', path: 'other.json', offset: 0, data: '{}' });
      await transcripts.append({ session_id: 'sesn_2', path: 'projects/a/s.jsonl', offset: 0, data: 'x' });

      expect(await transcripts.size('sesn_1', 'projects/a/s.jsonl')).toBe(bytes(line1 + line2));
      expect(await transcripts.size('sesn_1', 'missing')).toBe(0);
      const files = [...(await transcripts.files('sesn_1'))].sort((x, y) => x.path.localeCompare(y.path));
      expect(files).toEqual([
        { path: 'other.json', data: '{}' },
        { path: 'projects/a/s.jsonl', data: line1 + line2 },
      ]);
      expect(await transcripts.files('sesn_3')).toEqual([]);
      expect(await transcripts.sizes('sesn_1')).toEqual([
        { path: 'other.json', bytes: 2 },
        { path: 'projects/a/s.jsonl', bytes: bytes(line1 + line2) },
      ]);
      expect(await transcripts.sizes('sesn_3')).toEqual([]);
    });

    it('keeps only the new tail of a chunk overlapping what is mirrored, and refuses a gap', async () => {
      const { transcripts } = store();
      await transcripts.append({ session_id: 'sesn_1', path: 't.jsonl', offset: 0, data: 'line-1\n' });
      await transcripts.append({ session_id: 'sesn_1', path: 't.jsonl', offset: 0, data: 'line-1\nline-2\n' });
      await expect(transcripts.append({ session_id: 'sesn_1', path: 't.jsonl', offset: 100, data: 'lost' })).rejects.toBeInstanceOf(ValidationError);

      expect(await transcripts.size('sesn_1', 't.jsonl')).toBe(14);
      expect(await transcripts.files('sesn_1')).toEqual([{ path: 't.jsonl', data: 'line-1\nline-2\n' }]);
    });
  });
}
