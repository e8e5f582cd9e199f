export * from './docker-sandbox-runtime';
export { assertHardenedSpec, containerCreateOptions } from './host-config';
export { toRuntimeEvent } from './docker-events';
export * from './docker-sandbox-images';
