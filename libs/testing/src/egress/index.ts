export * from './scripted-upstream-proxy';
