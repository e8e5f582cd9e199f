import { OpenAiResponsesServer } from './openai-responses-server';
import { reply } from './scripted-reply';

interface SseFrame {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Reads an SSE body into frames, the way a Responses API client does. */
async function readSse(response: Response): Promise<SseFrame[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Record<string, unknown>;
      return { event, data };
    });
}

describe('OpenAiResponsesServer', () => {
  let server: OpenAiResponsesServer;
  beforeEach(async () => {
    server = await new OpenAiResponsesServer().start();
  });
  afterEach(() => server.close());

  const post = (body: Record<string, unknown>) =>
    fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-openai-secret' },
      body: JSON.stringify({ model: 'gpt-test', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], ...body }),
    });

  it('streams reasoning, text and a function call the way Codex reads them', async () => {
    server.script({
      kind: 'turn',
      thinking: 'plan',
      text: 'Running it.',
      toolCalls: [{ id: 'call_1', name: 'exec_command', input: { cmd: 'echo hi > out.txt' } }],
      chunkSize: 4,
    });

    const frames = await readSse(await post({ stream: true }));
    const types = frames.map((f) => f.event);

    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(frames.every((f) => f.data['type'] === f.event)).toBe(true);
    const text = frames.filter((f) => f.event === 'response.output_text.delta').map((f) => f.data['delta']);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe('Running it.');
    const done = frames.filter((f) => f.event === 'response.output_item.done').map((f) => f.data['item'] as Record<string, unknown>);
    expect(done.map((i) => i['type'])).toEqual(['reasoning', 'message', 'function_call']);
    expect(done[2]).toMatchObject({ call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"echo hi > out.txt"}' });
    const completed = frames.at(-1)?.data['response'] as Record<string, unknown>;
    expect(completed['status']).toBe('completed');
    expect(completed['usage']).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
  });

  it('answers non-streaming requests with one Response object', async () => {
    server.script(reply.text('plain answer'));

    const response = (await (await post({ stream: false })).json()) as Record<string, unknown>;

    expect(response['status']).toBe('completed');
    expect(response['output']).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'plain answer', annotations: [] }] }),
    ]);
  });

  it('returns scripted failures with their status and an OpenAI error body', async () => {
    server.script(reply.error(500, 'boom'));

    const response = await post({ stream: true });

    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { message: 'boom', type: 'server_error', param: null, code: null } });
  });

  it('breaks a stream off with response.failed after some text', async () => {
    server.script(reply.streamError('partial', 'server fell over'));

    const frames = await readSse(await post({ stream: true }));

    expect(frames.filter((f) => f.event === 'response.output_text.delta').map((f) => f.data['delta']).join('')).toBe('partial');
    expect(frames.at(-1)).toMatchObject({ event: 'response.failed', data: { response: { status: 'failed', error: { message: 'server fell over' } } } });
  });

  it('records requests (body kept, bearer token redacted) so tests can assert what the harness sent', async () => {
    await (await post({ stream: false, previous: 'turn one' })).text();

    expect(server.modelRequests).toHaveLength(1);
    expect(server.modelRequests[0]?.body).toMatchObject({ model: 'gpt-test', previous: 'turn one' });
    expect(server.modelRequests[0]?.headers['authorization']).toBe('[redacted]');
    expect(JSON.stringify(server.requests)).not.toContain('sk-openai-secret');
  });

  it('delays each delta on a slow stream', async () => {
    server.script(reply.text('abcdefgh', { chunkDelayMs: 60, chunkSize: 2 }));
    const started = Date.now();

    const frames = await readSse(await post({ stream: true }));

    expect(frames.filter((f) => f.event === 'response.output_text.delta')).toHaveLength(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 60 - 10);
  });
});
