import type { TurnCheckpoint } from '@berth/contracts';

export type TranscriptFile = Readonly<{ path: string; data: string }>;

/**
 * A fork's harness transcript: each file the checkpoint names, cut at the bytes mirrored when its
 * turn ended. The mirror only ever holds whole lines, so the cut ends on a line; a file the
 * checkpoint does not name (made by a later turn) is not part of the fork's conversation.
 */
export function cutTranscripts(files: readonly TranscriptFile[], cut: TurnCheckpoint['transcript']): TranscriptFile[] {
  const byPath = new Map(files.map((f) => [f.path, f.data]));
  return cut.flatMap(({ path, bytes }) => {
    const data = byPath.get(path);
    if (data === undefined || bytes === 0) return [];
    return [{ path, data: Buffer.from(data, 'utf8').subarray(0, bytes).toString('utf8') }];
  });
}
