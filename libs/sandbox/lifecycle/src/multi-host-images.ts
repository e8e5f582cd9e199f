import type { BuiltImage, ImageBuildContainer, ImageRecipe, SandboxImages } from '@berth/ports';

/**
 * Environment images on several sandbox hosts: built on every host (a sandbox may be placed on any
 * of them), in parallel. The tag names the base image id and the steps, so every host gives the
 * same tag when it holds the same base image (`docker save | docker load` keeps the id); a host
 * that gives another one would start sandboxes from an image the others lack, and fails the build.
 * The build containers of every host are listed as one, each id prefixed with its host's name.
 */
export class MultiHostSandboxImages implements SandboxImages {
  constructor(private readonly hosts: readonly Readonly<{ name: string; images: SandboxImages }>[]) {
    if (hosts.length === 0) throw new Error('MultiHostSandboxImages needs at least one host');
  }

  async ensure(recipe: ImageRecipe, onProgress?: (line: string) => void): Promise<BuiltImage> {
    const started = Date.now();
    const built = await Promise.all(this.hosts.map(async (h) => ({ host: h.name, image: await h.images.ensure(recipe, (line) => onProgress?.(`[${h.name}] ${line}`)) })));
    const tags = new Set(built.map((b) => b.image.image));
    if (tags.size > 1) {
      throw new Error(`the sandbox hosts built different images for one recipe (${built.map((b) => `${b.host}: ${b.image.image}`).join(', ')}): their base images differ; load the same base image on every host`);
    }
    return { image: built[0]?.image.image as string, built: built.some((b) => b.image.built), seconds: (Date.now() - started) / 1000 };
  }

  async builds(): Promise<ImageBuildContainer[]> {
    // A host that does not answer is left for the next sweep; the others are swept all the same.
    const perHost = await Promise.all(this.hosts.map(async (h) => (await h.images.builds().catch(() => [])).map((b) => ({ ...b, id: `${h.name}/${b.id}` }))));
    return perHost.flat();
  }

  async removeBuild(id: string): Promise<void> {
    // A container id has no '/'; a host name may.
    const at = id.lastIndexOf('/');
    await this.hosts.find((h) => h.name === id.slice(0, at))?.images.removeBuild(id.slice(at + 1));
  }
}
