import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './service-process';

const run = promisify(execFile);
const SCRIPTS = join(REPO_ROOT, 'scripts', 'docker');

/** The chaos suite's engines: `a` always, `b` beside it for the scenarios on two Docker hosts. */
export type EngineName = 'a' | 'b';

/**
 * Where one of the chaos suite's own Docker engines lives: its own socket, data root (the exec
 * root is `<data root>-exec`, see ensure-engine.sh), pidfile and log, apart from the team's shared
 * engine on unix:///run/berth-docker.sock, which the suite never stops or restarts. Engine `a` is
 * `berth-chaos-docker` (`/run/berth-chaos-docker.sock`, `/var/lib/berth-chaos-docker`…), `b` the
 * same with `-b`; BERTH_CHAOS_ENGINE_PREFIX renames both, for a second suite run on the machine.
 * Data roots persist, with the images copied in.
 */
export function chaosEngineEnv(name: EngineName): Readonly<{ DOCKER_HOST: string; BERTH_DOCKER_DATA_ROOT: string; BERTH_DOCKER_PIDFILE: string; BERTH_DOCKER_LOG: string }> {
  const prefix = process.env.BERTH_CHAOS_ENGINE_PREFIX || 'berth-chaos-docker';
  const base = name === 'a' ? prefix : `${prefix}-${name}`;
  return {
    DOCKER_HOST: `unix:///run/${base}.sock`,
    BERTH_DOCKER_DATA_ROOT: `/var/lib/${base}`,
    BERTH_DOCKER_PIDFILE: `/run/${base}.pid`,
    BERTH_DOCKER_LOG: `/var/log/${base}.log`,
  };
}

/**
 * A dockerd the chaos suite controls, so a scenario can restart the engine under running
 * sandboxes without touching anyone else's. Images come from the engine that built them (`docker
 * save | docker load`, only for a tag the private engine lacks; its data root persists between
 * runs), so no second build is needed.
 */
export class PrivateEngine {
  private constructor(
    readonly name: EngineName,
    readonly dockerHost: string,
    /** This process started the engine (and stops it at the end); false when one was already up. */
    private startedHere: boolean,
  ) {}

  static async start(name: EngineName, images: readonly string[], sourceDockerHost: string): Promise<PrivateEngine> {
    const paths = chaosEngineEnv(name);
    const env = { ...process.env, ...paths };
    const { stdout } = await run('bash', [join(SCRIPTS, 'ensure-engine.sh'), '--print-env'], { env, timeout: 10 * 60_000 });
    const engine = new PrivateEngine(name, paths.DOCKER_HOST, /BERTH_ENGINE_STARTED=1/.test(stdout));
    for (const image of images) {
      const present = await run('docker', ['image', 'inspect', image], { env }).then(
        () => true,
        () => false,
      );
      if (present) continue;
      process.stderr.write(`chaos: copying ${image} into the suite's own engine ${name}\n`);
      await run('bash', ['-c', `DOCKER_HOST=${sourceDockerHost} docker save "$1" | docker load -q`, 'copy', image], { env, timeout: 10 * 60_000, maxBuffer: 1 << 20 });
    }
    return engine;
  }

  /**
   * Stops dockerd (SIGTERM: its containers are stopped with it, no live-restore) and starts it
   * again on the same socket and data root. Resolves with when it went down and when it answered again.
   */
  async restart(onDown: () => void = () => undefined, downForMs = 0): Promise<{ downAt: number; upAt: number }> {
    await run('bash', [join(SCRIPTS, 'stop-engine.sh')], { env: this.env(), timeout: 60_000 });
    const downAt = Date.now();
    onDown();
    await new Promise((r) => setTimeout(r, downForMs));
    await run('bash', [join(SCRIPTS, 'ensure-engine.sh')], { env: this.env(), timeout: 120_000 });
    this.startedHere = true;
    return { downAt, upAt: Date.now() };
  }

  /** SIGSTOP to dockerd: the engine stops answering (a host gone from the network) while its containers keep running. */
  async freeze(): Promise<void> {
    process.kill(await this.pid(), 'SIGSTOP');
  }

  /** SIGCONT after `freeze`. */
  async thaw(): Promise<void> {
    process.kill(await this.pid(), 'SIGCONT');
  }

  private async pid(): Promise<number> {
    return Number((await readFile(chaosEngineEnv(this.name).BERTH_DOCKER_PIDFILE, 'utf8')).trim());
  }

  async stop(): Promise<void> {
    if (this.startedHere) await run('bash', [join(SCRIPTS, 'stop-engine.sh')], { env: this.env(), timeout: 60_000 });
  }

  private env(): NodeJS.ProcessEnv {
    return { ...process.env, ...chaosEngineEnv(this.name) };
  }
}
