import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './recorded-request';
import { ScriptedModelServer, sendJson, streamSse, type SseEvent } from './scripted-model-server';
import { chunksOf, estimateTokens, type ScriptedError, type ScriptedStreamFailure, type ScriptedTurn } from './scripted-reply';

/**
 * The Anthropic Messages API, scripted: `POST /v1/messages` (SSE when `stream` is true, JSON
 * otherwise), `POST /v1/messages/count_tokens`, and the `HEAD /api/hello` reachability probe
 * Claude Code sends at start. Point a harness at it with `ANTHROPIC_BASE_URL=<url>`.
 */
export class AnthropicMessagesServer extends ScriptedModelServer {
  protected isGeneration(request: RecordedRequest): boolean {
    return request.method === 'POST' && request.path === '/v1/messages';
  }

  protected override latestUserText(request: RecordedRequest): string | null {
    const messages = (request.body as { messages?: { role?: string; content?: unknown }[] } | null)?.messages ?? [];
    for (const message of [...messages].reverse()) {
      if (message.role !== 'user') continue;
      if (typeof message.content === 'string') return message.content;
      // Claude Code adds <system-reminder> text blocks of its own to user messages (tool results included).
      const texts = Array.isArray(message.content)
        ? message.content.filter((b: { type?: string; text?: unknown }) => b.type === 'text' && typeof b.text === 'string' && !b.text.trimStart().startsWith('<system-reminder>'))
        : [];
      if (texts.length > 0) return texts.map((b: { text: string }) => b.text).join('\n');
    }
    return null;
  }

  protected async respond(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (request.path === '/api/hello') return sendJson(res, 200, {});
    if (request.method === 'POST' && request.path === '/v1/messages/count_tokens') {
      return sendJson(res, 200, { input_tokens: estimateTokens(JSON.stringify(request.body)) });
    }
    if (!this.isGeneration(request)) {
      return this.notFound(request, res, anthropicError(404, `no scripted route for ${request.method} ${request.path}`));
    }
    const body = (request.body ?? {}) as { model?: string; stream?: boolean };
    const scripted = this.nextReply(request);
    if (scripted.kind === 'error') {
      return sendJson(res, scripted.status, anthropicError(scripted.status, scripted.message), errorHeaders(scripted));
    }
    const model = body.model ?? 'claude-scripted';
    const inputTokens = estimateTokens(JSON.stringify(request.body));
    const headers = { 'request-id': `req_${randomUUID().replace(/-/g, '')}` };
    if (scripted.kind === 'stream_error') {
      if (body.stream !== true) return sendJson(res, 529, anthropicError(529, scripted.message), headers);
      return streamSse(res, anthropicFailingStream(scripted, model, inputTokens), headers);
    }
    if (body.stream === true) return streamSse(res, anthropicStream(scripted, model, inputTokens), headers);
    return sendJson(res, 200, anthropicMessage(scripted, model, inputTokens), headers);
  }
}

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Readonly<Record<string, unknown>> };

function blocksOf(turn: ScriptedTurn): Block[] {
  const blocks: Block[] = [];
  if (turn.thinking !== undefined) blocks.push({ type: 'thinking', thinking: turn.thinking, signature: 'scripted-signature' });
  if (turn.text !== undefined) blocks.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? []) {
    blocks.push({ type: 'tool_use', id: call.id ?? `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`, name: call.name, input: call.input });
  }
  return blocks;
}

function stopReasonOf(turn: ScriptedTurn): 'tool_use' | 'end_turn' {
  return (turn.toolCalls?.length ?? 0) > 0 ? 'tool_use' : 'end_turn';
}

function outputTokensOf(turn: ScriptedTurn): number {
  return turn.outputTokens ?? estimateTokens(JSON.stringify(blocksOf(turn)));
}

/** The non-streaming reply: one Message object. */
export function anthropicMessage(turn: ScriptedTurn, model: string, inputTokens: number): Record<string, unknown> {
  return {
    id: `msg_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    type: 'message',
    role: 'assistant',
    model,
    content: blocksOf(turn),
    stop_reason: stopReasonOf(turn),
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: outputTokensOf(turn), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/** The streamed reply, event by event, as the real API sends it. */
export function anthropicStream(turn: ScriptedTurn, model: string, inputTokens: number): SseEvent[] {
  const message = anthropicMessage(turn, model, inputTokens);
  const delayMs = turn.chunkDelayMs;
  const events: SseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...(message.usage as object), output_tokens: 1 } },
      },
    },
    { event: 'ping', data: { type: 'ping' } },
  ];
  blocksOf(turn).forEach((block, index) => {
    const start = (content_block: unknown): SseEvent => ({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block } });
    const delta = (d: unknown): SseEvent => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d }, delayMs });
    switch (block.type) {
      case 'thinking':
        events.push(start({ type: 'thinking', thinking: '', signature: '' }));
        for (const piece of chunksOf(block.thinking, turn.chunkSize)) events.push(delta({ type: 'thinking_delta', thinking: piece }));
        events.push(delta({ type: 'signature_delta', signature: block.signature }));
        break;
      case 'text':
        events.push(start({ type: 'text', text: '' }));
        for (const piece of chunksOf(block.text, turn.chunkSize)) events.push(delta({ type: 'text_delta', text: piece }));
        break;
      case 'tool_use':
        events.push(start({ type: 'tool_use', id: block.id, name: block.name, input: {} }));
        for (const piece of chunksOf(JSON.stringify(block.input), turn.chunkSize)) events.push(delta({ type: 'input_json_delta', partial_json: piece }));
        break;
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReasonOf(turn), stop_sequence: null },
        usage: { input_tokens: inputTokens, output_tokens: outputTokensOf(turn), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  return events;
}

/** A stream that breaks off after some text with an in-stream `error` event, as the API does when overloaded mid-answer. */
export function anthropicFailingStream(failure: ScriptedStreamFailure, model: string, inputTokens: number): SseEvent[] {
  const started = anthropicStream({ kind: 'turn', text: failure.partialText, chunkDelayMs: failure.chunkDelayMs }, model, inputTokens);
  const upToText = started.filter((e) => e.event !== 'content_block_stop' && e.event !== 'message_delta' && e.event !== 'message_stop');
  return [...upToText, { event: 'error', data: anthropicError(529, failure.message) }];
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function anthropicError(status: number, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

function errorHeaders(error: ScriptedError): Record<string, string> {
  return { 'x-should-retry': String(error.retryable), 'request-id': `req_${randomUUID().replace(/-/g, '')}` };
}
