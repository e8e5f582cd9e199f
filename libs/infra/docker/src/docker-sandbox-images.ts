import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BerthError } from '@berth/core';
import type { BuiltImage, ImageRecipe, SandboxImages } from '@berth/ports';
import type Docker from 'dockerode';
import { engineError, imageMissing, isNotFound } from './docker-errors';
import { packFiles, type TarFile } from './tar';

export type DockerSandboxImagesOptions = Readonly<{
  /**
   * Network the build steps run on. `host` on an engine without a bridge (Berth's own runs with
   * `--bridge=none`); `default` on an ordinary engine.
   */
  network: string;
  /**
   * Extra CA certificates (`*.crt`) the package managers must trust while building, e.g. of a
   * TLS-inspecting proxy on the build host; they are in the build only, not in the image.
   */
  caCertificatesDir: string | null;
}>;

/** Repository of the environment images (`berth/env:<hash>`). */
export const ENV_IMAGE_REPOSITORY = 'berth/env';
const CA_DIR = '/tmp/berth-build-ca';
const CA_BUNDLE = `${CA_DIR}/bundle.pem`;

/**
 * The Dockerfile for a recipe on a resolved base image id. Steps run as root in exec form (no shell
 * parses their arguments); the build's CA bundle is an `ARG`, so it never persists in the image.
 */
export function environmentDockerfile(baseImageId: string, recipe: ImageRecipe): string {
  return [
    `FROM ${baseImageId}`,
    'USER root',
    `COPY build-ca ${CA_DIR}`,
    `RUN ["/bin/sh", "-c", "cat /etc/ssl/certs/ca-certificates.crt ${CA_DIR}/*.crt > ${CA_BUNDLE} 2>/dev/null; exit 0"]`,
    `ARG NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`,
    `ARG PIP_CERT=${CA_BUNDLE}`,
    ...recipe.steps.map((argv) => `RUN ${JSON.stringify(argv)}`),
    `RUN ["rm", "-rf", "${CA_DIR}"]`,
    'USER 1000:1000',
    '',
  ].join('\n');
}

type BuildMessage = { stream?: string; error?: string; errorDetail?: { message?: string } };

/**
 * Builds environment images on the engine (`docker build`, by the platform): the tag is a hash of
 * the base image id and the Dockerfile, so an unchanged environment reuses its image and two
 * environments with the same packages share one. One build per tag at a time in this process.
 */
export class DockerSandboxImages implements SandboxImages {
  private readonly building = new Map<string, Promise<void>>();

  constructor(
    private readonly docker: Docker,
    private readonly options: DockerSandboxImagesOptions,
  ) {}

  async ensure(recipe: ImageRecipe, onProgress: (line: string) => void = () => undefined): Promise<BuiltImage> {
    const started = Date.now();
    const dockerfile = environmentDockerfile(await this.imageId(recipe.base), recipe);
    const hash = createHash('sha256').update(dockerfile).digest('hex').slice(0, 16);
    const image = `${ENV_IMAGE_REPOSITORY}:${hash}`;
    const seconds = () => (Date.now() - started) / 1000;
    if (await this.exists(image)) return { image, built: false, seconds: seconds() };
    let build = this.building.get(image);
    if (build === undefined) {
      build = this.build(image, hash, dockerfile, onProgress).finally(() => this.building.delete(image));
      this.building.set(image, build);
    }
    await build;
    return { image, built: true, seconds: seconds() };
  }

  private async imageId(reference: string): Promise<string> {
    try {
      return (await this.docker.getImage(reference).inspect()).Id;
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

  private async build(image: string, hash: string, dockerfile: string, onProgress: (line: string) => void): Promise<void> {
    const context = packFiles([{ name: 'Dockerfile', data: Buffer.from(dockerfile) }, { name: 'build-ca/.keep', data: Buffer.alloc(0) }, ...this.caFiles()]);
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.docker.buildImage(Readable.from([context]), {
        t: image,
        networkmode: this.options.network,
        labels: { 'berth.image': 'environment', 'berth.inputs': hash },
        rm: true,
        forcerm: true,
      });
    } catch (error) {
      throw engineError('build', image, error);
    }
    const tail: string[] = [];
    await new Promise<void>((resolve, reject) => {
      this.docker.modem.followProgress(
        stream,
        (error: Error | null, messages: BuildMessage[]) => {
          const failed = error?.message ?? messages.find((m) => m.error !== undefined)?.error;
          if (failed === undefined) return resolve();
          const output = tail.filter((line) => line.trim() !== '').slice(-8).join('\n');
          reject(new BerthError('SANDBOX_IMAGE_BUILD_FAILED', 500, `the packages could not be installed: ${failed.trim()}${output ? `\n${output}` : ''}`, { image }));
        },
        (message: BuildMessage) => {
          for (const line of (message.stream ?? '').split('\n')) {
            if (line.trim() === '') continue;
            tail.push(line);
            if (tail.length > 40) tail.shift();
            onProgress(line);
          }
        },
      );
    });
  }

  private caFiles(): TarFile[] {
    const dir = this.options.caCertificatesDir;
    if (dir === null) return [];
    try {
      return readdirSync(dir)
        .filter((name) => name.endsWith('.crt'))
        .map((name) => ({ name: `build-ca/${name}`, data: readFileSync(join(dir, name)) }));
    } catch {
      return [];
    }
  }
}
