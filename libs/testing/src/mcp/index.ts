export * from './test-mcp-server';
