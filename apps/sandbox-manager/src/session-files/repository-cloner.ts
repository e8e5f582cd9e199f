import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Checkout } from '@berth/contracts';
import { EgressRelay } from './egress-relay';

const run = promisify(execFile);

/** `egressSocket`: the egress socket of the sandbox the clone is for; the clone's traffic goes out through it. */
export type CloneRequest = Readonly<{ url: string; checkout: Checkout | null; token: string | null; egressSocket: string }>;

/** A clone that failed, with git's own words (the token is never in them: it only travels in the environment). */
export class CloneFailed extends Error {}

/**
 * Clones repositories on the platform side, so a token never enters a sandbox: it goes to git as
 * an `http.extraHeader` through `GIT_CONFIG_*` environment variables (not argv, not a file, not the
 * clone's config), git runs with no system or user configuration, no prompts, no credential
 * helper, http(s) only, no submodules. The clone's remote is the plain URL. Every request goes
 * through the sandbox's own egress (an `EgressRelay` as git's `http.proxy`), so the clone reaches
 * only what the sandbox may reach, never the manager's host network.
 */
export class RepositoryCloner {
  constructor(private readonly options: Readonly<{ timeoutMs?: number }> = {}) {}

  /** Clones into a fresh temporary directory, at the branch or commit asked for; `use` gets the tree, which is removed afterwards. */
  async withClone<T>(request: CloneRequest, use: (dir: string) => Promise<T>): Promise<T> {
    const home = await mkdtemp(join(tmpdir(), 'berth-clone-'));
    const dir = join(home, 'tree');
    const relay = await EgressRelay.open(request.egressSocket);
    try {
      await this.clone(request, home, dir, relay).catch((error: unknown) => {
        // git says "403"; the egress said why (the host, the environment, the setting that would allow it).
        throw relay.refused === null ? error : new CloneFailed(`the sandbox's egress refused it: ${relay.refused}`);
      });
      return await use(dir);
    } finally {
      await relay.close();
      await rm(home, { recursive: true, force: true });
    }
  }

  private async clone(request: CloneRequest, home: string, dir: string, relay: EgressRelay): Promise<void> {
    const env = this.environment(home, request.token, relay.url);
    const branch = request.checkout?.type === 'branch' ? ['--branch', request.checkout.name] : [];
    await this.git(env, 'clone', ['clone', '--no-recurse-submodules', ...branch, '--', request.url, dir]);
    if (request.checkout?.type !== 'commit') return;
    const sha = request.checkout.sha;
    const known = await this.git(env, 'cat-file', ['-C', dir, 'cat-file', '-e', `${sha}^{commit}`]).then(() => true, () => false);
    if (!known) await this.git(env, 'fetch', ['-C', dir, 'fetch', '--no-tags', 'origin', sha]);
    await this.git(env, 'checkout', ['-C', dir, '-c', 'advice.detachedHead=false', 'checkout', '--detach', sha]);
  }

  private environment(home: string, token: string | null, proxy: string): NodeJS.ProcessEnv {
    const config: [string, string][] = [
      ['http.proxy', proxy],
      ['protocol.allow', 'never'],
      ['protocol.https.allow', 'always'],
      ['protocol.http.allow', 'always'],
      ['credential.helper', ''],
      ['core.hooksPath', '/dev/null'],
    ];
    if (token !== null) config.push(['http.extraHeader', `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`]);
    return {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '/bin/false',
      GIT_CONFIG_COUNT: String(config.length),
      ...Object.fromEntries(config.flatMap(([key, value], i) => [[`GIT_CONFIG_KEY_${i}`, key], [`GIT_CONFIG_VALUE_${i}`, value]])),
    };
  }

  private async git(env: NodeJS.ProcessEnv, step: string, args: readonly string[]): Promise<void> {
    try {
      await run('git', args, { env, timeout: this.options.timeoutMs ?? 10 * 60_000, maxBuffer: 4 * 1024 * 1024 });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-3).join(' ') ?? '';
      throw new CloneFailed(`git ${step} failed: ${stderr || (error instanceof Error ? error.message : String(error))}`);
    }
  }
}
