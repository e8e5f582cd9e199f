import { followOutputCommand, harnessExecCommand, parseTurnStatus, wholeLines } from './turn-files';

describe('turn files', () => {
  it('passes the harness argv as positional arguments, never inside the script', () => {
    const cmd = harnessExecCommand('turn_1', 'follow', 12, ['claude', '-p', "--resume=$(rm -rf /)'"]);
    expect(cmd.slice(0, 2)).toEqual(['sh', '-c']);
    expect(cmd[2]).not.toContain('rm -rf');
    expect(cmd.slice(3)).toEqual(['berth-turn', '/home/agent/.berth/turns', 'turn_1', 'follow', '12', 'claude', '-p', "--resume=$(rm -rf /)'"]);
  });

  it('reads the status line a turn leaves behind', () => {
    expect(parseTurnStatus('42 alive -')).toEqual({ pid: 42, alive: true, exitCode: null });
    expect(parseTurnStatus('42 dead 0\n')).toEqual({ pid: 42, alive: false, exitCode: 0 });
    expect(parseTurnStatus(undefined)).toBeNull();
    expect(parseTurnStatus('garbage')).toBeNull();
  });

  it('follows the output file from the byte after what was already read', () => {
    expect(followOutputCommand('turn_1', 100, 7)).toEqual(['tail', '-c', '+101', '-f', '--pid=7', '/home/agent/.berth/turns/turn_1.jsonl']);
  });

  it('takes only whole lines of a file still being written', () => {
    expect(wholeLines(Buffer.from('{"a":1}\n{"b":2}\n{"c"'))).toEqual({ lines: ['{"a":1}', '{"b":2}'], bytes: 16 });
    expect(wholeLines(null)).toEqual({ lines: [], bytes: 0 });
  });
});
