import type { Logger, SandboxImages } from '@berth/ports';
import { packageImageRecipe, type PackageMirrors, type SandboxConfig } from '@berth/sandbox-domain';
import type { EnvironmentSettings } from './environment-settings';

/**
 * An environment's `packages` installed into its own sandbox image before its first sandbox
 * starts: built once per (base image, packages), then reused by every later sandbox of it (and
 * of any environment with the same packages). Environments without packages start from their
 * base image directly. The build reaches the registries (or the operator's mirrors) and the
 * environment's allowed hosts through the egress, nothing else.
 */
export class PackageImages {
  constructor(
    private readonly images: SandboxImages,
    private readonly log: Logger,
    private readonly mirrors: PackageMirrors,
  ) {}

  async sandboxFor(environmentId: string, settings: EnvironmentSettings): Promise<SandboxConfig> {
    const { config, sandbox } = settings;
    const recipe =
      config.type === 'cloud'
        ? packageImageRecipe({
            base: sandbox.image,
            packages: config.packages,
            environmentId,
            allowedHosts: config.networking.type === 'limited' ? config.networking.allowed_hosts : [],
            mirrors: this.mirrors,
          })
        : null;
    if (recipe === null) return sandbox;
    const counts = config.type === 'cloud' ? `apt ${config.packages.apt.length}, npm ${config.packages.npm.length}, pip ${config.packages.pip.length}` : '';
    // Progress of a build that can take minutes: each step at info, the package managers' own output at debug.
    const built = await this.images.ensure(recipe, (line) =>
      /^Step \d+\/\d+ : /.test(line) ? this.log.info(`environment image build: ${line}`, { environment_id: environmentId }) : this.log.debug(`environment image build: ${line}`, { environment_id: environmentId }),
    );
    this.log.info(`environment ${environmentId}: sandbox image ${built.image} (${counts}) ${built.built ? `built in ${built.seconds.toFixed(1)} s` : `reused (${built.seconds.toFixed(2)} s)`}`, {
      environment_id: environmentId,
      image: built.image,
      built: built.built,
      seconds: built.seconds,
    });
    return { ...sandbox, image: built.image };
  }
}
