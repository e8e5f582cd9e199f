export * from './idempotent-ids';
export * from './recover-result';
export * from './sandbox-probe.port';
export * from './session-commands';
export * from './session-use-cases';
export * from './fork-transcripts';
