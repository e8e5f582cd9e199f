import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { harnessExecCommand, killTurnCommand, STDIN_END, TURN_DIR } from './turn-files';

/**
 * The harness exec's shell script, run by the host's `sh` (the same busybox-free Debian tools the
 * sandbox image has), with `cat` standing in for the harness: it prints whatever its stdin gives it.
 * The exec's own stdin carries the turn's first input, then (`follow`) the end line from the manager
 * that started it, or it closes (that manager died): everything the harness reads comes from the
 * turn's stdin file, which a restarted manager can still append to.
 */
describe('the harness exec script (host sh, cat as the harness)', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams | null = null;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-turn-files-'));
  });
  afterEach(() => {
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
    child = null;
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * `sent` is what reaches the exec's stdin of the `input` it announces (all of it unless a test cuts
   * it short); the exec's stdin is then closed unless `keepStdin` (the manager may still send the end line).
   */
  const run = (turnId: string, mode: 'follow' | 'file', argv: string[], input: string, options: Readonly<{ sent?: string; keepStdin?: boolean }> = {}) => {
    const cmd = harnessExecCommand(turnId, mode, Buffer.byteLength(input), argv).map((a) => (a === TURN_DIR ? dir : a));
    // Its own process group, as under `docker exec`: the pid file names the group to signal.
    const started = spawn(cmd[0], cmd.slice(1), { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    if (options.keepStdin === true) started.stdin.write(input);
    else started.stdin.end(options.sent ?? input);
    child = started;
    const lines: string[] = [];
    let pending = '';
    started.stdout.on('data', (c: Buffer) => {
      pending += c.toString();
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        lines.push(pending.slice(0, i));
        pending = pending.slice(i + 1);
      }
    });
    let stderr = '';
    started.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => started.on('close', (code) => resolve(code)));
    return { lines, exited, pid: started.pid as number, stderr: () => stderr, stdin: started.stdin };
  };
  const waitFor = async (what: string, check: () => boolean, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const groupAlive = (pgid: number) => spawnSync('kill', ['-0', '--', `-${pgid}`]).status === 0;

  it('follow: the first input becomes the stdin file; feeds it as it grows (the exec\'s stdin closed, as when its manager died), ends input at the end line in the file, records output and exit code, leaves no feeder behind', async () => {
    const { lines, exited, pid } = run('t1', 'follow', ['cat'], '{"n":1}\n{"n":2}\n');
    await waitFor('the first lines', () => lines.length >= 2);
    expect(lines).toEqual(['{"n":1}', '{"n":2}']);
    // The prompt is the user's: only the sandbox's user reads it.
    expect(statSync(join(dir, 't1.in')).mode & 0o777).toBe(0o600);

    appendFileSync(join(dir, 't1.in'), '{"answer":"allow"}\n');
    await waitFor('the appended line', () => lines.length >= 3);
    expect(lines[2]).toBe('{"answer":"allow"}');
    expect(existsSync(join(dir, 't1.exit'))).toBe(false);

    appendFileSync(join(dir, 't1.in'), `${STDIN_END}\n{"after":"the end"}\n`);
    expect(await exited).toBe(0);
    expect(readFileSync(join(dir, 't1.exit'), 'utf8').trim()).toBe('0');
    expect(readFileSync(join(dir, 't1.jsonl'), 'utf8')).toBe('{"n":1}\n{"n":2}\n{"answer":"allow"}\n');
    expect(Number(readFileSync(join(dir, 't1.pid'), 'utf8'))).toBe(pid);
    await waitFor('the stdin feed to be gone', () => !groupAlive(pid), 2_000);
  });

  it('follow: the end line on the exec\'s stdin (from the manager that started the harness) goes into the stdin file after what was appended there, and ends the input', async () => {
    const { lines, exited, pid, stdin } = run('t5', 'follow', ['cat'], '{"n":1}\n', { keepStdin: true });
    await waitFor('the first line', () => lines.length >= 1);
    appendFileSync(join(dir, 't5.in'), '{"answer":"allow"}\n');
    await waitFor('the appended line', () => lines.length >= 2);
    stdin.end(`${STDIN_END}\n`);
    expect(await exited).toBe(0);
    expect(lines).toEqual(['{"n":1}', '{"answer":"allow"}']);
    expect(readFileSync(join(dir, 't5.in'), 'utf8')).toBe(`{"n":1}\n{"answer":"allow"}\n${STDIN_END}\n`);
    await waitFor('the stdin feed and reader to be gone', () => !groupAlive(pid), 2_000);
  });

  it('file: the harness reads the stdin file as written, then end of file', async () => {
    const { lines, exited } = run('t2', 'file', ['cat'], '{"prompt":"hi"}\n');
    expect(await exited).toBe(0);
    expect(lines).toEqual(['{"prompt":"hi"}']);
  });

  it('an interrupt signals the whole group: harness, tee and stdin feed', async () => {
    const { exited, pid } = run('t3', 'follow', ['sleep', '30'], '');
    await waitFor('the pid file', () => existsSync(join(dir, 't3.pid')));
    const kill = killTurnCommand('t3', 'INT', 0.3).map((a) => a.split(TURN_DIR).join(dir));
    spawnSync(kill[0], kill.slice(1));
    await exited;
    await waitFor('the group to be gone', () => !groupAlive(pid), 2_000);
  });

  it('an input cut short (the manager died while sending it) starts no harness and leaves no pid file: the next manager starts the turn afresh', async () => {
    writeFileSync(join(dir, 't4.in'), '{"from":"an earlier start"}\n');
    const input = '{"type":"user","message":"a long prompt"}\n';
    const { lines, exited, stderr } = run('t4', 'follow', ['cat'], input, { sent: input.slice(0, 10) });
    expect(await exited).toBe(1);
    expect(stderr()).toContain('arrived incomplete');
    expect(lines).toEqual([]);
    expect(existsSync(join(dir, 't4.pid'))).toBe(false);
    expect(existsSync(join(dir, 't4.jsonl'))).toBe(false);
    expect(readFileSync(join(dir, 't4.in'), 'utf8')).toBe('{"from":"an earlier start"}\n');
  });
});
