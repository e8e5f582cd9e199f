export * from './docker-sandbox-runtime';
export { assertHardenedSpec, containerCreateOptions } from './host-config';
export { toRuntimeEvent } from './docker-events';
export { EGRESS_DIR_LABEL, EGRESS_NAME_FILE, EGRESS_PORT_LABEL, EGRESS_SOCKET_SUBDIR, EgressDirectories } from './egress-directories';
