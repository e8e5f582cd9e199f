import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './service-process';

const run = promisify(execFile);
const SCRIPTS = join(REPO_ROOT, 'scripts', 'docker');

/**
 * Where the chaos suite's own Docker engine lives: its own socket, data root (the exec root is
 * `<data root>-exec`, see ensure-engine.sh), pidfile and log, apart from the team's shared engine
 * on unix:///run/berth-docker.sock, which the suite never stops or restarts.
 */
export const CHAOS_ENGINE_ENV: Readonly<Record<string, string>> = {
  DOCKER_HOST: 'unix:///run/berth-chaos-docker.sock',
  BERTH_DOCKER_DATA_ROOT: '/var/lib/berth-chaos-docker',
  BERTH_DOCKER_PIDFILE: '/run/berth-chaos-docker.pid',
  BERTH_DOCKER_LOG: '/var/log/berth-chaos-docker.log',
};

const env = () => ({ ...process.env, ...CHAOS_ENGINE_ENV });

/**
 * A dockerd the chaos suite controls, so a scenario can restart the engine under running
 * sandboxes without touching anyone else's. Images come from the engine that built them (`docker
 * save | docker load`, only for a tag the private engine lacks; its data root persists between
 * runs), so no second build is needed.
 */
export class PrivateEngine {
  private constructor(
    readonly dockerHost: string,
    /** This process started the engine (and stops it at the end); false when one was already up. */
    private startedHere: boolean,
  ) {}

  static async start(images: readonly string[], sourceDockerHost: string): Promise<PrivateEngine> {
    const { stdout } = await run('bash', [join(SCRIPTS, 'ensure-engine.sh'), '--print-env'], { env: env(), timeout: 10 * 60_000 });
    const engine = new PrivateEngine(CHAOS_ENGINE_ENV.DOCKER_HOST, /BERTH_ENGINE_STARTED=1/.test(stdout));
    for (const image of images) {
      const present = await run('docker', ['image', 'inspect', image], { env: env() }).then(
        () => true,
        () => false,
      );
      if (present) continue;
      process.stderr.write(`chaos: copying ${image} into the suite's own engine\n`);
      await run('bash', ['-c', `DOCKER_HOST=${sourceDockerHost} docker save "$1" | docker load -q`, 'copy', image], { env: env(), timeout: 10 * 60_000, maxBuffer: 1 << 20 });
    }
    return engine;
  }

  /**
   * Stops dockerd (SIGTERM: its containers are stopped with it, no live-restore) and starts it
   * again on the same socket and data root. Resolves with when it went down and when it answered again.
   */
  async restart(onDown: () => void = () => undefined): Promise<{ downAt: number; upAt: number }> {
    await run('bash', [join(SCRIPTS, 'stop-engine.sh')], { env: env(), timeout: 60_000 });
    const downAt = Date.now();
    onDown();
    await run('bash', [join(SCRIPTS, 'ensure-engine.sh')], { env: env(), timeout: 120_000 });
    this.startedHere = true;
    return { downAt, upAt: Date.now() };
  }

  async stop(): Promise<void> {
    if (this.startedHere) await run('bash', [join(SCRIPTS, 'stop-engine.sh')], { env: env(), timeout: 60_000 });
  }
}
