import { createHash } from 'node:crypto';
import type { BuiltImage, ImageBuildContainer, ImageRecipe, SandboxImages } from '@berth/ports';

/** `SandboxImages` for wiring tests: names each recipe by a hash, "builds" each once (no container is left), and records the recipes it built. */
export class InMemorySandboxImages implements SandboxImages {
  readonly built: ImageRecipe[] = [];
  private readonly images = new Set<string>();

  async ensure(recipe: ImageRecipe): Promise<BuiltImage> {
    const image = `berth/env:${createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 16)}`;
    const fresh = !this.images.has(image);
    if (fresh) {
      this.images.add(image);
      this.built.push(recipe);
    }
    return { image, built: fresh, seconds: 0 };
  }

  async builds(): Promise<readonly ImageBuildContainer[]> {
    return [];
  }

  async removeBuild(): Promise<void> {}
}
