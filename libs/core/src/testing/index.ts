export * from './decider-spec';
export * from './fakes';
