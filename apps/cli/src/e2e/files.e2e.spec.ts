import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sessionSecretAad } from '@berth/contracts';
// The gateway's own test composition (in-memory SQLite, in-process kernel); no lib exports a platform harness yet.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startGateway, type GatewayHarness } from '../../../gateway/test/support/gateway-harness';
import { ExitCode } from '../exit-codes';

/**
 * `berth files …` and `berth sessions create --file … --repo …` with the real `bin/berth` against a
 * running gateway: upload from disk, list, download to a file and to stdout, delete; a session
 * created with a local file (uploaded on the way), an existing file id at a mount path of its own,
 * and a repository at a branch whose token comes from the environment, never the command line.
 */
jest.setTimeout(120_000);

const BERTH = resolve(__dirname, '..', '..', '..', '..', 'bin', 'berth');

type Run = { code: number; stdout: string; stderr: string };

describe('berth files and session resources', () => {
  let gw: GatewayHarness;
  let dir: string;

  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false });
    dir = mkdtempSync(join(tmpdir(), 'berth-cli-files-'));
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const berth = (args: string[], env: Record<string, string> = {}, key = gw.keyA): Promise<Run> =>
    new Promise((done) => {
      execFile(BERTH, args, { cwd: dir, env: { ...process.env, BERTH_API_URL: gw.url, BERTH_API_KEY: key, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      });
    });
  const ok = async (args: string[], env: Record<string, string> = {}): Promise<Run> => {
    const run = await berth(args, env);
    if (run.code !== 0) throw new Error(`berth ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return run;
  };

  it('uploads, lists, downloads and deletes files', async () => {
    const source = join(dir, 'report.csv');
    writeFileSync(source, 'a,b\n1,2\n');
    const uploaded = JSON.parse((await ok(['files', 'upload', source, '--json'])).stdout);
    expect(uploaded).toMatchObject({ id: expect.stringMatching(/^file_/), filename: 'report.csv', mime_type: 'text/csv', size_bytes: 8 });

    expect((await ok(['files', 'list'])).stdout).toMatch(new RegExp(`^${uploaded.id}\\s+report\\.csv\\s+8\\s`, 'm'));
    const got = await ok(['files', 'get', uploaded.id]);
    expect(got.stdout).toContain('text/csv');

    await ok(['files', 'download', uploaded.id, '-o', 'copy.csv']);
    expect(readFileSync(join(dir, 'copy.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect((await ok(['files', 'download', uploaded.id, '-o', '-'])).stdout).toBe('a,b\n1,2\n');

    expect((await berth(['files', 'get', uploaded.id], {}, gw.keyB)).code).toBe(ExitCode.notFound);
    expect((await ok(['files', 'delete', uploaded.id])).stdout.trim()).toBe(`deleted ${uploaded.id}`);
    const gone = await berth(['files', 'download', uploaded.id]);
    expect(gone.code).toBe(ExitCode.notFound);
    expect(gone.stderr).toContain('FILE_NOT_FOUND');
    expect((await berth(['files', 'upload', join(dir, 'missing.txt')])).code).toBe(ExitCode.usage);
  });

  it('creates a session with files and a repository as resources', async () => {
    const agent = JSON.parse((await ok(['--json', 'agents', 'create', '--name', 'a', '--model', 'claude-sonnet-4-5'])).stdout);
    const env = JSON.parse((await ok(['--json', 'envs', 'create', '--name', 'e'])).stdout);
    writeFileSync(join(dir, 'notes.md'), '# notes\n');
    const existing = JSON.parse((await ok(['--json', 'files', 'upload', join(dir, 'notes.md')])).stdout);
    const created = await ok(
      ['--json', 'sessions', 'create', '--agent', agent.id, '--env', env.id, '--file', 'notes.md', '--file', `${existing.id}=/workspace/docs/notes.md`, '--repo', 'https://git.example/acme/widgets.git#release/2'],
      { BERTH_GIT_TOKEN: 'ghp_from_env' },
    );
    expect(created.stderr).toMatch(/uploaded notes\.md as file_/);
    const session = JSON.parse(created.stdout);
    expect(session.resources).toEqual([
      expect.objectContaining({ type: 'file', mount_path: expect.stringMatching(/^\/mnt\/session\/uploads\/file_/) }),
      expect.objectContaining({ type: 'file', file_id: existing.id, mount_path: '/workspace/docs/notes.md' }),
      expect.objectContaining({ type: 'github_repository', url: 'https://git.example/acme/widgets.git', checkout: { type: 'branch', name: 'release/2' }, mount_path: '/workspace/widgets' }),
    ]);
    expect(JSON.stringify(session)).not.toContain('ghp_from_env');
    const sealed = await gw.store.secrets.get(session.id, session.resources[2].id);
    expect(sealed === null ? null : gw.secrets.open(sealed, sessionSecretAad(session.id, session.resources[2].id))).toBe('ghp_from_env');
  });
});
