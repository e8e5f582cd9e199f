export * from './decider-spec';
export * from './fakes';
export * from './workflow-spec';
