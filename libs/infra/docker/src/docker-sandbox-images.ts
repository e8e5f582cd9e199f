import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BerthError } from '@berth/core';
import type { BuiltImage, ImageBuildContainer, ImageRecipe, LeaseRunner, SandboxImages } from '@berth/ports';
import type Docker from 'dockerode';
import { engineError, imageMissing, isNotFound } from './docker-errors';
import { startExec } from './docker-exec';
import { EGRESS_DIR_LABEL, EgressDirectories } from './egress-directories';
import { packFiles, type TarFile } from './tar';

export type DockerSandboxImagesOptions = Readonly<{
  /** The egress directory root (the egress serves it): each build gets its own directory there, as a sandbox does. */
  egressRoot: string;
  /**
   * Extra CA certificates (`*.crt`) the package managers must trust while building, e.g. of a
   * TLS-inspecting proxy on the build host; they are in the build only, not in the image.
   */
  caCertificatesDir: string | null;
  /** On every build container: this installation's (several may share an engine); `builds()` lists only these. */
  scopeLabels: Readonly<Record<string, string>>;
  /** Holds a tag's build lease on this engine while it is built, across every sandbox-manager sharing the store. */
  lock: LeaseRunner;
}>;

/** Repository of the environment images (`berth/env:<hash>`). */
export const ENV_IMAGE_REPOSITORY = 'berth/env';
/** Labels a build container (and nothing else), with the tag it builds. */
export const IMAGE_BUILD_LABEL = 'berth.image-build';
/** What the build brings in and removes before the commit (the recipe's files live here too: `IMAGE_BUILD_DIR` of @berth/sandbox-domain). */
const BUILD_DIR = '/tmp/berth-build';
const CA_DIR = `${BUILD_DIR}/ca`;
const CA_BUNDLE = `${BUILD_DIR}/ca-bundle.pem`;
const EGRESS_MOUNT = '/run/berth';
/** Enough for apt, npm and pip; a build is the platform's, but what it installs is the user's choice. */
const BUILD_LIMITS = { memoryBytes: 2 * 1024 ** 3, nanoCpus: 2e9, pidsLimit: 1024 };
/**
 * Root's capabilities a package install needs (dpkg sets owners and modes; apt drops to `_apt` to
 * download); everything else stays dropped, as in a sandbox.
 */
const BUILD_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'SETUID', 'SETGID'];

/**
 * The tag's inputs: the base image id and what the steps install with (steps, variables, files);
 * not the grant (what a build may reach changes no byte of the image). `egress-1`: images built
 * by `docker build` before the egress are not reused.
 */
export function environmentImageHash(baseImageId: string, recipe: ImageRecipe): string {
  const inputs = JSON.stringify(['egress-1', baseImageId, recipe.steps, Object.entries(recipe.env).sort(), recipe.files]);
  return createHash('sha256').update(inputs).digest('hex').slice(0, 16);
}

/** The commit's config changes: what the base image says, as Dockerfile lines, then uid 1000 and the image's labels. */
export function commitChanges(base: Docker.ImageInspectInfo['Config'], hash: string): string[] {
  return [
    `WORKDIR ${base.WorkingDir === '' ? '/' : base.WorkingDir}`,
    `CMD ${JSON.stringify(base.Cmd ?? [])}`,
    `ENTRYPOINT ${JSON.stringify(base.Entrypoint ?? [])}`,
    'USER 1000:1000',
    `LABEL berth.image=environment berth.inputs=${hash}`,
  ];
}

/**
 * Builds environment images on the engine, by the platform, through the egress: a container of the
 * base image made like a sandbox (network `none`, capabilities dropped but the few an install
 * needs, `no-new-privileges`, limits, its own egress directory and the relay), each step run in it
 * as root with the proxy variables, then committed as `berth/env:<hash>` with the base image's
 * config and uid 1000. The egress serves it the build's grant only. An existing tag is reused.
 * One build per tag and engine at a time: in this process, and across the sandbox-managers through
 * the store lease `image-build:<engine id>:<tag>`, held while the build container lives; a manager
 * that finds the lease taken waits for it and then reuses the image the other one committed.
 */
export class DockerSandboxImages implements SandboxImages {
  private readonly building = new Map<string, Promise<boolean>>();
  private readonly egress: EgressDirectories;
  private engineId: Promise<string> | null = null;

  constructor(
    private readonly docker: Docker,
    private readonly options: DockerSandboxImagesOptions,
  ) {
    this.egress = new EgressDirectories(options.egressRoot);
  }

  async ensure(recipe: ImageRecipe, onProgress: (line: string) => void = () => undefined): Promise<BuiltImage> {
    const started = Date.now();
    const base = await this.inspectBase(recipe.base);
    const hash = environmentImageHash(base.Id, recipe);
    const image = `${ENV_IMAGE_REPOSITORY}:${hash}`;
    const seconds = () => (Date.now() - started) / 1000;
    if (await this.exists(image)) return { image, built: false, seconds: seconds() };
    let build = this.building.get(image);
    if (build === undefined) {
      build = this.buildLeased(base, hash, recipe, onProgress).finally(() => this.building.delete(image));
      this.building.set(image, build);
    }
    const built = await build;
    return { image, built, seconds: seconds() };
  }

  async builds(): Promise<ImageBuildContainer[]> {
    const labels = [IMAGE_BUILD_LABEL, ...Object.entries(this.options.scopeLabels).map(([k, v]) => `${k}=${v}`)];
    let found: Docker.ContainerInfo[];
    try {
      found = await this.docker.listContainers({ all: true, filters: { label: labels } });
    } catch (error) {
      throw engineError('list', IMAGE_BUILD_LABEL, error);
    }
    const engine = await this.engine();
    return found.map((c) => ({ id: c.Id, lease: buildLease(engine, c.Labels[IMAGE_BUILD_LABEL] ?? '') }));
  }

  /** Only a build container is removed, whatever id it is given. */
  async removeBuild(id: string): Promise<void> {
    const container = this.docker.getContainer(id);
    let labels: Readonly<Record<string, string>>;
    try {
      labels = (await container.inspect()).Config.Labels ?? {};
    } catch (error) {
      if (isNotFound(error)) return;
      throw engineError('inspect', id, error);
    }
    if (labels[IMAGE_BUILD_LABEL] === undefined) return;
    try {
      await container.remove({ force: true, v: true });
    } catch (error) {
      if (!isNotFound(error)) throw engineError('remove', id, error);
    }
    const egressId = labels[EGRESS_DIR_LABEL];
    if (egressId !== undefined) await this.egress.remove(egressId);
  }

  /** The engine's own id names the lease: every manager on this engine agrees on it, and another engine's builds never wait for it. */
  private engine(): Promise<string> {
    this.engineId ??= this.askEngineId().catch((error: unknown) => {
      this.engineId = null;
      throw error;
    });
    return this.engineId;
  }

  private async askEngineId(): Promise<string> {
    let info: { ID?: unknown };
    try {
      info = (await this.docker.info()) as { ID?: unknown };
    } catch (error) {
      throw engineError('info', 'engine', error);
    }
    if (typeof info.ID !== 'string' || info.ID === '') throw new Error('the Docker engine reported no ID (it names the image build leases)');
    return info.ID;
  }

  /** Under the tag's lease; false when another manager committed the image while this one waited for it. */
  private async buildLeased(base: Docker.ImageInspectInfo, hash: string, recipe: ImageRecipe, onProgress: (line: string) => void): Promise<boolean> {
    return this.options.lock.run(buildLease(await this.engine(), hash), async () => {
      if (await this.exists(`${ENV_IMAGE_REPOSITORY}:${hash}`)) return false;
      await this.build(base, hash, recipe, onProgress);
      return true;
    });
  }

  private async inspectBase(reference: string): Promise<Docker.ImageInspectInfo> {
    try {
      return await this.docker.getImage(reference).inspect();
    } catch (error) {
      if (isNotFound(error)) throw imageMissing(reference, error);
      throw engineError('image inspect', reference, error);
    }
  }

  private async exists(image: string): Promise<boolean> {
    try {
      await this.docker.getImage(image).inspect();
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw engineError('image inspect', image, error);
    }
  }

  private async build(base: Docker.ImageInspectInfo, hash: string, recipe: ImageRecipe, onProgress: (line: string) => void): Promise<void> {
    const name = `berth-b-${hash}-${randomBytes(3).toString('hex')}`;
    const image = `${ENV_IMAGE_REPOSITORY}:${hash}`;
    const egressId = await this.egress.prepareBuild(name, recipe.grant);
    let container: Docker.Container | null = null;
    try {
      container = await this.createBuildContainer(name, base.Id, hash, egressId, recipe);
      await container.putArchive(packFiles([...recipe.files.map((f) => ({ name: f.path.replace(/^\/+/, ''), data: Buffer.from(f.base64, 'base64') })), ...this.caFiles()]), { path: '/' });
      await container.start();
      const run = (argv: readonly string[], env: Readonly<Record<string, string>> = {}) => this.step(container as Docker.Container, argv, env, onProgress);
      if ((await run(['/bin/sh', '-c', 'command -v socat'])).code !== 0) {
        throw failure(image, `the base image ${recipe.base} has no socat: an image build reaches its package registries only through the egress relay (socat), as a sandbox does; use an image that has it (the harness images do)`);
      }
      const env = { ...recipe.env, ...(await this.caEnv(run)) };
      for (const [index, argv] of recipe.steps.entries()) {
        onProgress(`Step ${index + 1}/${recipe.steps.length} : ${argv.join(' ').slice(0, 200)}`);
        const result = await run(argv, env);
        if (result.code === 0) continue;
        const refused = await this.egress.buildDenials(egressId);
        const cause = refused.length > 0 ? refused.join('\n') : `${argv[0]} exited with code ${result.code}`;
        throw failure(image, `${cause}${result.output === '' ? '' : `\n${result.output}`}`);
      }
      await run(['rm', '-rf', BUILD_DIR]);
      await container.stop({ t: 2 }).catch(() => undefined);
      await container.commit({ repo: ENV_IMAGE_REPOSITORY, tag: hash, changes: commitChanges(base.Config, hash), pause: false });
    } catch (error) {
      if (error instanceof BerthError) throw error;
      throw engineError('image build', image, error);
    } finally {
      await container?.remove({ force: true, v: true }).catch(() => undefined);
      await this.egress.remove(egressId);
    }
  }

  private async createBuildContainer(name: string, baseId: string, hash: string, egressId: string, recipe: ImageRecipe): Promise<Docker.Container> {
    return this.docker.createContainer({
      name,
      Image: baseId,
      Entrypoint: [],
      Cmd: [...recipe.keepalive],
      User: '0:0',
      Labels: { ...this.options.scopeLabels, [IMAGE_BUILD_LABEL]: hash, [EGRESS_DIR_LABEL]: egressId },
      HostConfig: {
        NetworkMode: 'none',
        CapDrop: ['ALL'],
        CapAdd: BUILD_CAPABILITIES,
        SecurityOpt: ['no-new-privileges'],
        Privileged: false,
        PidsLimit: BUILD_LIMITS.pidsLimit,
        Memory: BUILD_LIMITS.memoryBytes,
        MemorySwap: BUILD_LIMITS.memoryBytes,
        NanoCpus: BUILD_LIMITS.nanoCpus,
        RestartPolicy: { Name: 'no' },
        LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
        Mounts: [{ Type: 'bind', Source: this.egress.socketDir(egressId), Target: EGRESS_MOUNT, ReadOnly: true }],
      },
    });
  }

  /** One step as root; its stdout goes to `onProgress` line by line, and the tails of both streams come back for an error. */
  private async step(container: Docker.Container, argv: readonly string[], env: Readonly<Record<string, string>>, onProgress: (line: string) => void): Promise<{ code: number; output: string }> {
    const exec = await startExec(this.docker, container, { cmd: argv, env, user: '0:0', workdir: '/' });
    const tail: string[] = [];
    for await (const line of exec.lines) {
      if (line.trim() === '') continue;
      tail.push(line);
      if (tail.length > 8) tail.shift();
      onProgress(line);
    }
    const code = await exec.exit;
    const stderr = (exec.stderrTail?.() ?? '').split('\n').filter((l) => l.trim() !== '').slice(-8);
    return { code, output: [...tail, ...stderr].join('\n') };
  }

  /** With extra CA certificates, npm and pip trust the system's and those (a bundle made in the container). */
  private async caEnv(run: (argv: readonly string[]) => Promise<{ code: number }>): Promise<Record<string, string>> {
    if (this.caFiles().length === 0) return {};
    await run(['/bin/sh', '-c', `cat /etc/ssl/certs/ca-certificates.crt ${CA_DIR}/*.crt > ${CA_BUNDLE} 2>/dev/null; exit 0`]);
    return { NODE_EXTRA_CA_CERTS: CA_BUNDLE, PIP_CERT: CA_BUNDLE };
  }

  private caFiles(): TarFile[] {
    const dir = this.options.caCertificatesDir;
    if (dir === null) return [];
    try {
      return readdirSync(dir)
        .filter((name) => name.endsWith('.crt'))
        .map((name) => ({ name: `${CA_DIR.slice(1)}/${name}`, data: readFileSync(join(dir, name)) }));
    } catch {
      return [];
    }
  }
}

const buildLease = (engine: string, hash: string): string => `image-build:${engine}:${hash}`;

const failure = (image: string, detail: string): BerthError => new BerthError('SANDBOX_IMAGE_BUILD_FAILED', 500, `the packages could not be installed: ${detail}`, { image });
