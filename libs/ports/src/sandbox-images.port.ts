/** An image to build: `FROM base`, then each step as a `RUN` in exec form (an argv). */
export type ImageRecipe = Readonly<{ base: string; steps: readonly (readonly string[])[] }>;

export type BuiltImage = Readonly<{
  /** Reference to start containers from; the same recipe on the same base image gives the same one. */
  image: string;
  /** False when an image for this recipe already existed (nothing was installed). */
  built: boolean;
  /** How long ensuring it took. */
  seconds: number;
}>;

/**
 * Builds sandbox images on the container engine, by the platform and never inside a sandbox.
 * Idempotent: the image is named by a hash of the base image id and the steps, and an existing
 * one is reused. A failed step rejects with an error that quotes the tool's own message.
 */
export interface SandboxImages {
  ensure(recipe: ImageRecipe, onProgress?: (line: string) => void): Promise<BuiltImage>;
}
