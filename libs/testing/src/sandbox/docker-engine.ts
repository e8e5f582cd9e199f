import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export type DockerTestEngine = Readonly<{ dockerHost: string; baseImage: string; harnessImage: string | null }>;

const SCRIPTS = join(__dirname, '..', '..', '..', '..', 'scripts', 'docker');
let cached: { dockerHost: string; baseImage: string } | null = null;
let harness: string | null = null;

function run(script: string, args: readonly string[] = []): string {
  return execFileSync('bash', [join(SCRIPTS, script), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 15 * 60_000 });
}

function valueOf(output: string, key: string): string {
  const line = output.split('\n').find((l) => l.startsWith(`${key}=`));
  if (!line) throw new Error(`build-images.sh printed no ${key}=… line:\n${output}`);
  return line.slice(key.length + 1).trim();
}

/**
 * The real Docker engine for integration tests: starts Berth's own dockerd if none answers and
 * builds the base image once (both idempotent; parallel workers serialise on file locks). Pass
 * `{ harness: true }` only where the CLIs are needed: the first harness build takes minutes.
 * Sets `process.env.DOCKER_HOST` for code that reads it.
 */
export function ensureDockerTestEngine(options: { harness?: boolean } = {}): DockerTestEngine {
  if (!cached) {
    const dockerHost = run('ensure-engine.sh').trim().split('\n').pop() as string;
    process.env['DOCKER_HOST'] = dockerHost;
    cached = { dockerHost, baseImage: valueOf(run('build-images.sh', ['--base-only']), 'base') };
  }
  if (options.harness && !harness) harness = valueOf(run('build-images.sh'), 'harness');
  return { ...cached, harnessImage: harness };
}
