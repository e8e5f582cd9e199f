import { ArchiveRefused, SESSION_ARCHIVE_FORMAT, type SessionArchiveManifest } from './session-archive';
import { checkImportable, workspaceEntryOf, type RestoredWorkspaceEntryHeader } from './session-import';
import { IMPORT_LIMITS } from './import-origin';

const manifest = (over: Partial<SessionArchiveManifest> = {}, hsid: string | null = 'b0c1e5a2-1234-4d2f-9a7e-0123456789ab'): SessionArchiveManifest => ({
  format: SESSION_ARCHIVE_FORMAT,
  version: 1,
  exported_at: '2026-12-02T04:00:00.000Z',
  source: { session_id: 'sesn_src', agent: { id: 'agent_1', version: 2 }, environment_id: 'env_1', harness: 'claude-code', harness_session_id: hsid },
  session: {},
  agent: {},
  environment: {},
  journal_events: 0,
  transcripts: ['/home/agent/.claude/projects/-workspace/hs-1.jsonl'],
  outputs: [],
  workspace: false,
  ...over,
});
const refusal = (run: () => unknown): { code: string; status: number } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ArchiveRefused) return { code: error.code, status: error.status };
    throw error;
  }
  throw new Error('not refused');
};

describe('checkImportable', () => {
  it('takes a manifest the exporter writes', () => {
    expect(() => checkImportable(manifest())).not.toThrow();
    expect(() => checkImportable(manifest({}, null))).not.toThrow();
  });

  it.each(['--resume', '../../etc/passwd', 'a b', 'x;rm -rf /', ''])('refuses harness conversation id %j (passed to the harness, part of a file name)', (hsid) => {
    expect(refusal(() => checkImportable(manifest({}, hsid)))).toEqual({ code: 'ARCHIVE_MANIFEST_INVALID', status: 400 });
  });

  it.each(['/etc/cron.d/x', '/home/agent/../../etc/x', '/home/agentx/y', '/workspace/.bashrc', 'home/agent/x', '/home/agent/.berth/turns/turn_1.exit'])('refuses transcript %j: a restore writes it into the sandbox, only below its home', (path) => {
    expect(refusal(() => checkImportable(manifest({ transcripts: [path] })))).toEqual({ code: 'ARCHIVE_PATH_UNSAFE', status: 400 });
  });

  it('refuses more outputs than an import maps', () => {
    const outputs = Array.from({ length: IMPORT_LIMITS.outputs + 1 }, (_, i) => `file_${i}`);
    expect(refusal(() => checkImportable(manifest({ outputs })))).toEqual({ code: 'ARCHIVE_MANIFEST_INVALID', status: 400 });
  });
});

describe('workspaceEntryOf: workspace.tar as it is put back below /workspace', () => {
  const entry = (name: string, over: Partial<RestoredWorkspaceEntryHeader> = {}): RestoredWorkspaceEntryHeader => ({ name, type: 'file', size: 3, mode: 0o644, ...over });
  const none = new Set<string>();

  it('strips the workspace/ prefix, keeps the permission bits and drops set-id and sticky bits', () => {
    expect(workspaceEntryOf(entry('workspace/', { type: 'directory' }), none)).toEqual({ kind: 'skip' });
    expect(workspaceEntryOf(entry('workspace/src/', { type: 'directory', mode: 0o1755 }), none)).toEqual({ kind: 'directory', name: 'src', mode: 0o755 });
    expect(workspaceEntryOf(entry('workspace/src/run.sh', { mode: 0o6755 }), none)).toEqual({ kind: 'file', name: 'src/run.sh', mode: 0o755, size: 3 });
  });

  it('makes a relative symlink target absolute from where the link is (an escaping one keeps its meaning)', () => {
    expect(workspaceEntryOf(entry('workspace/a/link', { type: 'symlink', linkname: '../notes.txt' }), none)).toEqual({ kind: 'symlink', name: 'a/link', target: '/workspace/notes.txt' });
    expect(workspaceEntryOf(entry('workspace/link', { type: 'symlink', linkname: '../../etc/passwd' }), none)).toEqual({ kind: 'symlink', name: 'link', target: '/etc/passwd' });
    expect(workspaceEntryOf(entry('workspace/abs', { type: 'symlink', linkname: '/usr/bin' }), none)).toEqual({ kind: 'symlink', name: 'abs', target: '/usr/bin' });
  });

  it.each([
    ['outside workspace/', entry('etc/passwd')],
    ['the tree root as a file', entry('workspace')],
    ['a parent step', entry('workspace/../etc/passwd')],
    ['a dot', entry('workspace/./x')],
    ['an empty part', entry('workspace//x')],
    ['a hard link', entry('workspace/h', { type: 'link', linkname: 'workspace/x' })],
    ['a device', entry('workspace/d', { type: 'character-device' })],
    ['a fifo', entry('workspace/f', { type: 'fifo' })],
    ['a symlink without target', entry('workspace/s', { type: 'symlink', linkname: '' })],
  ])('refuses %s', (_what, header) => {
    expect(refusal(() => workspaceEntryOf(header, none))).toEqual({ code: 'ARCHIVE_WORKSPACE_INVALID', status: 400 });
  });

  it('refuses an entry below a symlink the archive made (it would be written where the link points)', () => {
    const links = new Set(['etc']);
    expect(refusal(() => workspaceEntryOf(entry('workspace/etc/passwd'), links))).toEqual({ code: 'ARCHIVE_WORKSPACE_INVALID', status: 400 });
    expect(refusal(() => workspaceEntryOf(entry('workspace/etc/sub/x'), links))).toEqual({ code: 'ARCHIVE_WORKSPACE_INVALID', status: 400 });
    expect(workspaceEntryOf(entry('workspace/etcetera'), links)).toMatchObject({ kind: 'file' });
  });
});
