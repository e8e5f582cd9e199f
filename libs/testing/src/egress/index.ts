export * from './scripted-upstream-proxy';
export * from './test-certificates';
