export * from './scripted-token-endpoint';
