import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { harnessExecCommand, killTurnCommand, STDIN_END, TURN_DIR } from './turn-files';

/**
 * The harness exec's shell script, run by the host's `sh` (the same busybox-free Debian tools the
 * sandbox image has), with `cat` standing in for the harness: it prints whatever its stdin gives it.
 * The exec's own stdin is closed, as the manager's is: everything the harness reads comes from the
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

  const run = (turnId: string, mode: 'follow' | 'file', argv: string[]) => {
    const cmd = harnessExecCommand(turnId, mode, argv).map((a) => (a === TURN_DIR ? dir : a));
    // Its own process group, as under `docker exec`: the pid file names the group to signal.
    const started = spawn(cmd[0], cmd.slice(1), { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    started.stdin.end();
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
    const exited = new Promise<number | null>((resolve) => started.on('close', (code) => resolve(code)));
    return { lines, exited, pid: started.pid as number };
  };
  const waitFor = async (what: string, check: () => boolean, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const groupAlive = (pgid: number) => spawnSync('kill', ['-0', '--', `-${pgid}`]).status === 0;

  it('follow: feeds the stdin file as it grows, ends input at the end line, records output and exit code, leaves no feeder behind', async () => {
    writeFileSync(join(dir, 't1.in'), '{"n":1}\n{"n":2}\n');
    const { lines, exited, pid } = run('t1', 'follow', ['cat']);
    await waitFor('the first lines', () => lines.length >= 2);
    expect(lines).toEqual(['{"n":1}', '{"n":2}']);

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

  it('file: the harness reads the stdin file as written, then end of file', async () => {
    writeFileSync(join(dir, 't2.in'), '{"prompt":"hi"}\n');
    const { lines, exited } = run('t2', 'file', ['cat']);
    expect(await exited).toBe(0);
    expect(lines).toEqual(['{"prompt":"hi"}']);
  });

  it('an interrupt signals the whole group: harness, tee and stdin feed', async () => {
    writeFileSync(join(dir, 't3.in'), '');
    const { exited, pid } = run('t3', 'follow', ['sleep', '30']);
    await waitFor('the pid file', () => existsSync(join(dir, 't3.pid')));
    const kill = killTurnCommand('t3', 'INT', 0.3).map((a) => a.split(TURN_DIR).join(dir));
    spawnSync(kill[0], kill.slice(1));
    await exited;
    await waitFor('the group to be gone', () => !groupAlive(pid), 2_000);
  });
});
