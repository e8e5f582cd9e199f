import type { SandboxImages } from '@berth/ports';
import { packageImageRecipe, type SandboxConfig } from '@berth/sandbox-domain';
import type { ManagerLog } from '../sessions/send-reliably';
import type { EnvironmentSettings } from './environment-settings';

/**
 * An environment's `packages` installed into its own sandbox image before its first sandbox
 * starts: built once per (base image, packages), then reused by every later sandbox of it (and
 * of any environment with the same packages). Environments without packages start from their
 * base image directly.
 */
export class PackageImages {
  constructor(
    private readonly images: SandboxImages,
    private readonly log: ManagerLog,
  ) {}

  async sandboxFor(environmentId: string, settings: EnvironmentSettings): Promise<SandboxConfig> {
    const { config, sandbox } = settings;
    const recipe = config.type === 'cloud' ? packageImageRecipe(sandbox.image, config.packages) : null;
    if (recipe === null) return sandbox;
    const counts = config.type === 'cloud' ? `apt ${config.packages.apt.length}, npm ${config.packages.npm.length}, pip ${config.packages.pip.length}` : '';
    const built = await this.images.ensure(recipe, (line) => this.log.log(`environment ${environmentId} image: ${line}`));
    this.log.log(`environment ${environmentId}: sandbox image ${built.image} (${counts}) ${built.built ? `built in ${built.seconds.toFixed(1)} s` : `reused (${built.seconds.toFixed(2)} s)`}`);
    return { ...sandbox, image: built.image };
  }
}
