import { cutTranscripts } from './fork-transcripts';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('cutTranscripts', () => {
  const turn1 = '{"type":"user","text":"première"}\n{"type":"assistant","text":"✓ one"}\n';
  const turn2 = '{"type":"user","text":"second"}\n{"type":"assistant","text":"✓ two"}\n';
  const turn3 = '{"type":"user","text":"third"}\n';
  const files = [
    { path: '/home/agent/.claude/projects/-workspace/hs_1.jsonl', data: turn1 + turn2 + turn3 },
    { path: '/home/agent/.claude/projects/-workspace/hs_1/subagents/a.jsonl', data: 'late\n' },
  ];

  it('cuts each named file at its byte count (multi-byte characters counted as bytes) and drops files the checkpoint does not name', () => {
    const cut = cutTranscripts(files, [{ path: files[0].path, bytes: bytes(turn1 + turn2) }]);
    expect(cut).toEqual([{ path: files[0].path, data: turn1 + turn2 }]);
  });

  it('leaves out a file that is gone from the mirror or was empty at the turn', () => {
    expect(cutTranscripts(files, [{ path: '/missing.jsonl', bytes: 10 }, { path: files[1].path, bytes: 0 }])).toEqual([]);
  });
});
