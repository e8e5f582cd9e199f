export * from './anthropic-messages-server';
export * from './openai-responses-server';
export * from './recorded-request';
export * from './scripted-model-server';
export * from './scripted-reply';
