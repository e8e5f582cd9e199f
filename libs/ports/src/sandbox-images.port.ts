/** A file the build steps need (a mirror's signing key), put into the build container first; removed before the commit. */
export type ImageRecipeFile = Readonly<{ path: string; base64: string }>;

/**
 * What an image build may reach through the egress, beside the platform rule that always holds:
 * the package registries of these ecosystems and these hosts (the environment's allowed hosts and
 * the operator's mirrors). Written for the egress beside the build's socket, never by the build.
 */
export type ImageBuildGrant = Readonly<{ environmentId: string; ecosystems: readonly string[]; allowedHosts: readonly string[] }>;

/**
 * An image to build: a container of `base` made like a sandbox (no network but its egress relay),
 * each step run in it as root (an argv: no shell parses it) with `env`, then committed.
 */
export type ImageRecipe = Readonly<{
  base: string;
  steps: readonly (readonly string[])[];
  /** Variables the steps run with (the proxy, the mirrors); never kept in the image. */
  env: Readonly<Record<string, string>>;
  files: readonly ImageRecipeFile[];
  /** PID 1 of the build container: the relay to its egress socket. */
  keepalive: readonly string[];
  grant: ImageBuildGrant;
}>;

export type BuiltImage = Readonly<{
  /** Reference to start containers from; the same recipe on the same base image gives the same one. */
  image: string;
  /** False when an image for this recipe already existed (nothing was installed). */
  built: boolean;
  /** How long ensuring it took. */
  seconds: number;
}>;

/**
 * A build container as the engine lists it. Its builder holds the store lease `lease` for as long
 * as the build runs (a sandbox-manager building the same image waits for it), so a container
 * whose lease nobody holds is a dead builder's leftover.
 */
export type ImageBuildContainer = Readonly<{
  /** What `removeBuild` takes. */
  id: string;
  lease: string;
}>;

/**
 * Builds sandbox images on the container engine, by the platform and never inside a sandbox.
 * Idempotent: the image is named by a hash of the base image id and what the steps install, and
 * an existing one is reused. A failed step rejects with an error that quotes the tool's own
 * message, or the egress's when it refused a destination.
 */
export interface SandboxImages {
  ensure(recipe: ImageRecipe, onProgress?: (line: string) => void): Promise<BuiltImage>;
  /** The build containers of this installation (its scope) on the engine, live or left behind. */
  builds(): Promise<readonly ImageBuildContainer[]>;
  /** Removes a build container and what was made for it (its egress directory); one already gone is fine. */
  removeBuild(id: string): Promise<void>;
}
