export * from './session-view';
export * from './manager-commands';
export * from './inputs';
export * from './outputs';
export * from './policy';
export * from './sandbox-manager.workflow';
export * from './custom-tool-calls';
export * from './continuation';
