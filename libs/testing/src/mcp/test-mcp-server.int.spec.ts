import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { lookupAnswer, TestMcpServer } from './test-mcp-server';

describe('TestMcpServer', () => {
  let server: TestMcpServer;
  beforeEach(async () => {
    server = await new TestMcpServer().start();
  });
  afterEach(() => server.close());

  it('lists its tools and answers calls over streamable HTTP, recording each call', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['lookup', 'shout']);
    const result = await client.callTool({ name: 'lookup', arguments: { key: 'answer' } });
    await client.close();

    expect(result.content).toEqual([{ type: 'text', text: lookupAnswer('answer') }]);
    expect(server.calls).toEqual([{ tool: 'lookup', arguments: { key: 'answer' }, at: expect.any(Date) }]);
    expect(server.methods).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
  });

  it('answers only POST on /mcp', async () => {
    expect((await fetch(server.url)).status).toBe(405);
    expect((await fetch(server.url.replace('/mcp', '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('with a bearer token, answers only requests that carry it and records what each request sent', async () => {
    const guarded = await new TestMcpServer({ bearerToken: 'tok-1' }).start();
    try {
      const client = new Client({ name: 'test', version: '1.0.0' });
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(guarded.url)))).rejects.toThrow();
      const authed = new Client({ name: 'test', version: '1.0.0' });
      await authed.connect(new StreamableHTTPClientTransport(new URL(guarded.url), { requestInit: { headers: { authorization: 'Bearer tok-1' } } }));
      expect((await authed.callTool({ name: 'lookup', arguments: { key: 'k' } })).content).toEqual([{ type: 'text', text: lookupAnswer('k') }]);
      await authed.close();
      expect(guarded.authorizations[0]).toBeNull();
      expect(guarded.authorizations.slice(1).every((a) => a === 'Bearer tok-1')).toBe(true);
      expect(guarded.calls).toHaveLength(1);
    } finally {
      await guarded.close();
    }
  });
});
