export * from './docker-sandbox-runtime';
export { assertHardenedSpec, containerCreateOptions } from './host-config';
export { toRuntimeEvent } from './docker-events';
export { LoopWorkspaces, MIN_LOOP_WORKSPACE_BYTES } from './workspaces/loop-workspaces';
export { VolumeWorkspaces } from './workspaces/volume-workspaces';
export { detectWorkspaceKind } from './workspaces/detect-workspaces';
export { sessionLayoutArchive } from './workspaces/layout';
export * from './docker-sandbox-images';
export { EGRESS_DIR_LABEL, EGRESS_NAME_FILE, EGRESS_PORT_LABEL, EGRESS_SOCKET_SUBDIR, EgressDirectories } from './egress-directories';
