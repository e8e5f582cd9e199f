import { eventIdFor, type RecordedEvent } from './events';
import {
  ARCHIVE_LIMITS,
  ArchiveRefused,
  classifyArchiveEntry,
  parseArchiveJournal,
  parseArchiveManifest,
  SESSION_ARCHIVE_FORMAT,
  transcriptEntryName,
  type ArchiveEntryHeader,
  type SessionArchiveManifest,
} from './session-archive';

const manifest: SessionArchiveManifest = {
  format: SESSION_ARCHIVE_FORMAT,
  version: 1,
  exported_at: '2026-12-02T04:00:00.000Z',
  source: { session_id: 'sesn_src', agent: { id: 'agent_1', version: 2 }, environment_id: 'env_1', harness: 'claude-code', harness_session_id: 'hs-1' },
  session: { id: 'sesn_src' },
  agent: { id: 'agent_1' },
  environment: { id: 'env_1' },
  journal_events: 2,
  transcripts: ['/home/agent/.claude/projects/-workspace/hs-1.jsonl'],
  outputs: [],
  workspace: true,
};
const file = (name: string, size = 10): ArchiveEntryHeader => ({ name, type: 'file', size });
const afterManifest = new Set(['manifest.json']);
const refusal = (run: () => unknown): { code: string; status: number } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ArchiveRefused) return { code: error.code, status: error.status };
    throw error;
  }
  throw new Error('not refused');
};
const event = (seq: number, over: Partial<RecordedEvent> = {}): string =>
  JSON.stringify({
    id: eventIdFor(`cmd_${seq}`, 0),
    session_id: 'sesn_src',
    seq,
    schema_version: 1,
    command_id: `cmd_${seq}`,
    occurred_at: '2026-12-02T04:00:00.000Z',
    type: 'UserMessageReceived',
    data: { turn_id: `turn_${seq}`, content: [{ type: 'text', text: 'hi' }], queued: false },
    ...over,
  });

describe('classifyArchiveEntry: every entry header is checked before its bytes are read', () => {
  it('knows the layout', () => {
    expect(classifyArchiveEntry(file('manifest.json'), new Set())).toEqual({ kind: 'manifest' });
    expect(classifyArchiveEntry(file('journal.jsonl'), afterManifest)).toEqual({ kind: 'journal' });
    expect(classifyArchiveEntry(file('workspace.tar'), afterManifest)).toEqual({ kind: 'workspace' });
    expect(classifyArchiveEntry(file(transcriptEntryName(manifest.transcripts[0])), afterManifest)).toEqual({ kind: 'transcript', path: manifest.transcripts[0] });
    expect(classifyArchiveEntry(file('outputs/file_1/content'), afterManifest)).toEqual({ kind: 'output_content', file_id: 'file_1' });
    expect(classifyArchiveEntry(file('outputs/file_1/metadata.json'), afterManifest)).toEqual({ kind: 'output_metadata', file_id: 'file_1' });
    expect(classifyArchiveEntry({ name: 'transcripts/', type: 'directory', size: 0 }, afterManifest)).toEqual({ kind: 'directory' });
  });

  it.each(['../etc/passwd', 'transcripts/../../x', '/abs/path', 'transcripts/a/./b', 'transcripts//b', 'a\\b', 'nul\0byte', 'x'.repeat(ARCHIVE_LIMITS.nameChars + 1)])(
    'refuses the unsafe path %j with ARCHIVE_PATH_UNSAFE (400)',
    (name) => expect(refusal(() => classifyArchiveEntry(file(name), afterManifest))).toEqual({ code: 'ARCHIVE_PATH_UNSAFE', status: 400 }),
  );

  it.each(['symlink', 'link', 'character-device', 'block-device', 'fifo'])('refuses a %s entry with ARCHIVE_ENTRY_TYPE_REFUSED', (type) => {
    expect(refusal(() => classifyArchiveEntry({ name: 'transcripts/home/x', type, size: 0 }, afterManifest)).code).toBe('ARCHIVE_ENTRY_TYPE_REFUSED');
  });

  it('refuses an entry outside the layout, a second entry of one name, too many entries, and a manifest that is not first', () => {
    expect(refusal(() => classifyArchiveEntry(file('notes.txt'), afterManifest)).code).toBe('ARCHIVE_ENTRY_UNKNOWN');
    expect(refusal(() => classifyArchiveEntry(file('outputs/../content'), afterManifest)).code).toBe('ARCHIVE_PATH_UNSAFE');
    expect(refusal(() => classifyArchiveEntry(file('journal.jsonl'), new Set(['manifest.json', 'journal.jsonl']))).code).toBe('ARCHIVE_ENTRY_DUPLICATE');
    const full = new Set(Array.from({ length: ARCHIVE_LIMITS.entries }, (_, i) => `transcripts/f${i}`));
    expect(refusal(() => classifyArchiveEntry(file('transcripts/one-more'), full)).code).toBe('ARCHIVE_TOO_MANY_ENTRIES');
    expect(refusal(() => classifyArchiveEntry(file('journal.jsonl'), new Set())).code).toBe('ARCHIVE_MANIFEST_MISSING');
  });

  it('refuses an entry over its size limit (the manifest has a small one, the workspace a large one)', () => {
    expect(refusal(() => classifyArchiveEntry(file('manifest.json', ARCHIVE_LIMITS.manifestBytes + 1), new Set())).code).toBe('ARCHIVE_ENTRY_TOO_LARGE');
    expect(refusal(() => classifyArchiveEntry(file('journal.jsonl', ARCHIVE_LIMITS.entryBytes + 1), afterManifest)).code).toBe('ARCHIVE_ENTRY_TOO_LARGE');
    expect(classifyArchiveEntry(file('workspace.tar', ARCHIVE_LIMITS.entryBytes + 1), afterManifest)).toEqual({ kind: 'workspace' });
    expect(refusal(() => classifyArchiveEntry(file('journal.jsonl', -1), afterManifest)).code).toBe('ARCHIVE_ENTRY_TOO_LARGE');
  });

  it('a refusal of the whole upload for its size is a 413', () => {
    expect(new ArchiveRefused('ARCHIVE_TOO_LARGE', 'too large').status).toBe(413);
  });
});

describe('parseArchiveManifest', () => {
  it('reads a valid manifest', () => {
    expect(parseArchiveManifest(JSON.stringify(manifest))).toEqual(manifest);
  });

  it.each([
    ['not JSON', '{'],
    ['another format', JSON.stringify({ ...manifest, format: 'zip' })],
    ['a newer version', JSON.stringify({ ...manifest, version: 2 })],
    ['an unknown field', JSON.stringify({ ...manifest, token: 'ghp_x' })],
    ['a bad source id', JSON.stringify({ ...manifest, source: { ...manifest.source, session_id: '../x' } })],
    ['an unknown harness', JSON.stringify({ ...manifest, source: { ...manifest.source, harness: 'vim' } })],
  ])('refuses %s with ARCHIVE_MANIFEST_INVALID', (_, text) => {
    expect(refusal(() => parseArchiveManifest(text)).code).toBe('ARCHIVE_MANIFEST_INVALID');
  });
});

describe('parseArchiveJournal', () => {
  it('reads recorded events in seq order', () => {
    expect(parseArchiveJournal(`${event(1)}\n${event(2)}\n`, manifest).map((e) => e.seq)).toEqual([1, 2]);
  });

  it.each([
    ['an unknown event type', [event(1), event(2, { type: 'SessionHijacked' } as unknown as Partial<RecordedEvent>)]],
    ['data that does not fit its type', [event(1), event(2, { data: { turn_id: 'x' } } as unknown as Partial<RecordedEvent>)]],
    ['a line that is not JSON', [event(1), '{']],
    ['another session', [event(1), event(2, { session_id: 'sesn_other' })]],
    ['a gap in seq', [event(1), event(3)]],
    ['fewer events than the manifest says', [event(1)]],
  ])('refuses %s with ARCHIVE_EVENT_INVALID', (_, lines) => {
    expect(refusal(() => parseArchiveJournal(lines.join('\n'), manifest)).code).toBe('ARCHIVE_EVENT_INVALID');
  });
});
