import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApiError, UsageError } from '../exit-codes';
import { str, type Command } from './command';

/**
 * API keys are minted on the server machine, straight into the store (there is no HTTP route
 * for it: a key that could mint keys would be a master key). `berth keys create` runs the
 * gateway's own key-creation step with this process's environment (BERTH_STORE_URL …).
 */
const REPO_ROOT = resolve(__dirname, '..', '..', '..', '..');
export const CREATE_KEY_SCRIPT = join(REPO_ROOT, 'apps', 'gateway', 'src', 'cli', 'create-api-key.ts');

function runScript(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', CREATE_KEY_SCRIPT, ...args], { cwd: REPO_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

export const keyCommands: readonly Command[] = [
  {
    name: ['keys', 'create'],
    args: [],
    options: {
      owner: { type: 'string', help: 'owner the key acts as (default: local)' },
      name: { type: 'string', help: 'a label for the key (default: cli)' },
      store: { type: 'string', help: 'store URL (default: $BERTH_STORE_URL, else sqlite:./.berth/berth.db)' },
    },
    summary: 'mint an API key (run on the server machine; uses BERTH_STORE_URL)',
    local: true,
    run: async (_ctx, _a, o) => {
      if (!existsSync(CREATE_KEY_SCRIPT)) {
        throw new ApiError(0, 'unavailable', `this checkout has no key-creation step (${CREATE_KEY_SCRIPT}); see docs/cli.md`, 'KEYS_UNAVAILABLE');
      }
      const owner = str(o, 'owner') ?? 'local';
      const name = str(o, 'name') ?? 'cli';
      const store = str(o, 'store');
      const { code, stdout, stderr } = await runScript(['--owner', owner, '--name', name, '--json', ...(store ? ['--store', store] : [])]);
      // The step exits 2 on bad arguments, like berth itself.
      if (code === 2) throw new UsageError(stderr.trim().split('\n')[0]);
      if (code !== 0) throw new ApiError(0, 'key_creation_failed', stderr.trim() || `key creation exited with ${code}`, 'KEY_CREATION_FAILED');
      const issued = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { key: string; owner_id: string; prefix: string };
      return { json: { ...issued, name }, human: issued.key };
    },
  },
];
