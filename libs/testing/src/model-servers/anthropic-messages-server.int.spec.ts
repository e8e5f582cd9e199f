import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer } from './anthropic-messages-server';
import { reply } from './scripted-reply';

describe('AnthropicMessagesServer (through the official SDK)', () => {
  let server: AnthropicMessagesServer;
  let client: Anthropic;

  beforeEach(async () => {
    server = await new AnthropicMessagesServer().start();
    client = new Anthropic({ baseURL: server.url, apiKey: 'sk-ant-secret-value', maxRetries: 0 });
  });
  afterEach(() => server.close());

  const ask = (text: string) => ({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user' as const, content: text }] });

  it('streams thinking, text and a tool call that the SDK assembles into one message', async () => {
    server.script({
      kind: 'turn',
      thinking: 'plan the write',
      text: 'Writing the file now.',
      toolCalls: [{ id: 'toolu_1', name: 'Bash', input: { command: 'echo hi > out.txt' } }],
      chunkSize: 5,
    });

    const stream = client.messages.stream(ask('write a file'));
    const textDeltas: string[] = [];
    stream.on('text', (delta) => textDeltas.push(delta));
    const message = await stream.finalMessage();

    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'plan the write', signature: 'scripted-signature' },
      { type: 'text', text: 'Writing the file now.', citations: undefined },
      { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo hi > out.txt' } },
    ].map((b) => (b.type === 'text' ? expect.objectContaining({ type: 'text', text: b.text }) : b)));
    expect(textDeltas.length).toBeGreaterThan(1);
    expect(textDeltas.join('')).toBe('Writing the file now.');
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('answers non-streaming requests with one Message, then falls back to the default reply', async () => {
    server.script(reply.text('first'));
    server.setDefaultReply(reply.text('fallback'));

    const first = await client.messages.create(ask('one'));
    const second = await client.messages.create(ask('two'));

    expect(first.content).toEqual([{ type: 'text', text: 'first' }]);
    expect(first.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: 'fallback' }]);
  });

  it('answers each conversation from its own script, keyed by its latest user text (tool results and reminders aside)', async () => {
    server.scriptFor('slow step', reply.toolCall('Bash', { command: 'sleep 2' }), reply.text('slow done')).setDefaultReply(reply.text('default'));
    const text = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('');
    expect(text(await client.messages.create(ask('hello there')))).toBe('default');
    expect(text(await client.messages.create(ask('run the slow step')))).toBe('tool_use');
    const followUp = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'run the slow step' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }, { type: 'text', text: '<system-reminder>x</system-reminder>' }] },
      ],
    });
    expect(text(followUp)).toBe('slow done');
    expect(text(await client.messages.create(ask('run the slow step again')))).toBe('default');
  });

  it('returns a scripted overload as the real API does (529, overloaded_error)', async () => {
    server.script(reply.error(529, 'Overloaded'));

    const failure = await client.messages.create(ask('hi')).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('breaks a stream off with an in-stream overloaded error after some text', async () => {
    server.script(reply.streamError('partial ans', 'Overloaded mid-stream'));
    const stream = client.messages.stream(ask('go'));
    const text: string[] = [];
    stream.on('text', (delta) => text.push(delta));

    const failure = await stream.finalMessage().catch((e: unknown) => e);

    expect(text.join('')).toBe('partial ans');
    expect(String(failure)).toContain('Overloaded mid-stream');
  });

  it('records every request with the body and without the API key', async () => {
    await client.messages.create(ask('remember me'));
    await client.messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'count me' }] });

    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/messages', 'POST /v1/messages/count_tokens']);
    expect(server.modelRequests).toHaveLength(1);
    expect(server.modelRequests[0]?.body).toMatchObject({ messages: [{ role: 'user', content: 'remember me' }] });
    const headers = server.requests[0]?.headers ?? {};
    expect(headers['x-api-key'] ?? headers['authorization']).toBe('[redacted]');
    expect(JSON.stringify(server.requests)).not.toContain('sk-ant-secret-value');
  });

  it('streams slowly when asked, and stops writing when the client goes away', async () => {
    server.script(reply.text('a long answer that streams slowly', { chunkDelayMs: 200, chunkSize: 4 }));
    const stream = client.messages.stream(ask('go'));
    const started = Date.now();
    await new Promise<void>((resolve) => stream.once('text', () => resolve()));
    stream.abort();
    await stream.done().catch(() => undefined);

    expect(Date.now() - started).toBeLessThan(1_000);
    // The next request is served normally: the aborted stream did not wedge the server.
    server.script(reply.text('still here'));
    const next = await client.messages.create(ask('again'));
    expect(next.content).toEqual([{ type: 'text', text: 'still here' }]);
  });

  it('answers the reachability probe Claude Code sends at start and 404s unknown routes', async () => {
    const hello = await fetch(`${server.url}/api/hello`, { method: 'HEAD' });
    const unknown = await fetch(`${server.url}/v1/unknown`);

    expect(hello.status).toBe(200);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(server.unroutedRequests.map((r) => r.path)).toEqual(['/v1/unknown']);
  });
});
