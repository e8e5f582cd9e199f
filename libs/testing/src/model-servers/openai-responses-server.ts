import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './recorded-request';
import { ScriptedModelServer, sendJson, streamSse, type SseEvent } from './scripted-model-server';
import { chunksOf, estimateTokens, type ScriptedStreamFailure, type ScriptedTurn } from './scripted-reply';

/**
 * The OpenAI Responses API, scripted: `POST /v1/responses` streaming SSE the way Codex reads it
 * (`response.created`, `response.output_item.added`/`done`, text and argument deltas,
 * `response.completed` with usage), or one Response object when `stream` is false. Codex reaches
 * it through a custom model provider whose `base_url` is `<url>/v1`.
 */
export class OpenAiResponsesServer extends ScriptedModelServer {
  protected isGeneration(request: RecordedRequest): boolean {
    return request.method === 'POST' && request.path === '/v1/responses';
  }

  protected async respond(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (request.method === 'GET' && request.path === '/v1/models') return sendJson(res, 200, { object: 'list', data: [] });
    if (!this.isGeneration(request)) {
      return this.notFound(request, res, openAiError(404, `no scripted route for ${request.method} ${request.path}`));
    }
    const body = (request.body ?? {}) as { model?: string; stream?: boolean };
    const scripted = this.nextReply();
    if (scripted.kind === 'error') {
      return sendJson(res, scripted.status, openAiError(scripted.status, scripted.message), { 'x-should-retry': String(scripted.retryable) });
    }
    const model = body.model ?? 'gpt-scripted';
    const inputTokens = estimateTokens(JSON.stringify(request.body));
    if (scripted.kind === 'stream_error') {
      if (body.stream !== true) return sendJson(res, 500, openAiError(500, scripted.message));
      return streamSse(res, responsesFailingStream(scripted, model, inputTokens));
    }
    if (body.stream === true) return streamSse(res, responsesStream(scripted, model, inputTokens));
    return sendJson(res, 200, responseObject(scripted, model, inputTokens, 'completed'));
  }
}

type OutputItem =
  | { type: 'reasoning'; id: string; summary: { type: 'summary_text'; text: string }[] }
  | { type: 'message'; id: string; role: 'assistant'; status: 'completed'; content: { type: 'output_text'; text: string; annotations: [] }[] }
  | { type: 'function_call'; id: string; call_id: string; name: string; namespace?: string; arguments: string; status: 'completed' };

const shortId = (): string => randomUUID().replace(/-/g, '').slice(0, 24);

function itemsOf(turn: ScriptedTurn): OutputItem[] {
  const items: OutputItem[] = [];
  if (turn.thinking !== undefined) items.push({ type: 'reasoning', id: `rs_${shortId()}`, summary: [{ type: 'summary_text', text: turn.thinking }] });
  if (turn.text !== undefined) {
    items.push({
      type: 'message',
      id: `msg_${shortId()}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    });
  }
  for (const call of turn.toolCalls ?? []) {
    items.push({
      type: 'function_call',
      id: `fc_${shortId()}`,
      call_id: call.id ?? `call_${shortId()}`,
      name: call.name,
      ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
      arguments: JSON.stringify(call.input),
      status: 'completed',
    });
  }
  return items;
}

function usageOf(turn: ScriptedTurn, inputTokens: number, items: OutputItem[]): Record<string, unknown> {
  const outputTokens = turn.outputTokens ?? estimateTokens(JSON.stringify(items));
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

/** A Response object (the non-streaming reply, and the payload of `response.completed`). */
export function responseObject(turn: ScriptedTurn, model: string, inputTokens: number, status: 'in_progress' | 'completed', id = `resp_${shortId()}`, items = itemsOf(turn)): Record<string, unknown> {
  const done = status === 'completed';
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output: done ? items : [],
    usage: done ? usageOf(turn, inputTokens, items) : null,
    error: null,
    incomplete_details: null,
  };
}

/** The streamed reply, event by event, as the Responses API sends it. */
export function responsesStream(turn: ScriptedTurn, model: string, inputTokens: number): SseEvent[] {
  const id = `resp_${shortId()}`;
  const items = itemsOf(turn);
  const delayMs = turn.chunkDelayMs;
  let sequence = 0;
  const ev = (type: string, data: Record<string, unknown>, slow = false): SseEvent => ({
    event: type,
    data: { type, sequence_number: sequence++, ...data },
    ...(slow ? { delayMs } : {}),
  });
  const events: SseEvent[] = [
    ev('response.created', { response: responseObject(turn, model, inputTokens, 'in_progress', id) }),
    ev('response.in_progress', { response: responseObject(turn, model, inputTokens, 'in_progress', id) }),
  ];
  items.forEach((item, output_index) => {
    const item_id = item.id;
    switch (item.type) {
      case 'reasoning': {
        const text = item.summary[0]?.text ?? '';
        events.push(ev('response.output_item.added', { output_index, item: { ...item, summary: [] } }));
        events.push(ev('response.reasoning_summary_part.added', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } }));
        for (const delta of chunksOf(text, turn.chunkSize)) {
          events.push(ev('response.reasoning_summary_text.delta', { item_id, output_index, summary_index: 0, delta }, true));
        }
        events.push(ev('response.reasoning_summary_text.done', { item_id, output_index, summary_index: 0, text }));
        events.push(ev('response.reasoning_summary_part.done', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text } }));
        break;
      }
      case 'message': {
        const text = item.content[0]?.text ?? '';
        events.push(ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } }));
        events.push(ev('response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
        for (const delta of chunksOf(text, turn.chunkSize)) {
          events.push(ev('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] }, true));
        }
        events.push(ev('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] }));
        events.push(ev('response.content_part.done', { item_id, output_index, content_index: 0, part: item.content[0] }));
        break;
      }
      case 'function_call': {
        events.push(ev('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } }));
        for (const delta of chunksOf(item.arguments, turn.chunkSize)) {
          events.push(ev('response.function_call_arguments.delta', { item_id, output_index, delta }, true));
        }
        events.push(ev('response.function_call_arguments.done', { item_id, output_index, arguments: item.arguments }));
        break;
      }
    }
    events.push(ev('response.output_item.done', { output_index, item }));
  });
  events.push(ev('response.completed', { response: responseObject(turn, model, inputTokens, 'completed', id, items) }));
  return events;
}

/** A stream that breaks off after some text with `response.failed`, as the API does on a server error mid-answer. */
export function responsesFailingStream(failure: ScriptedStreamFailure, model: string, inputTokens: number): SseEvent[] {
  const turn: ScriptedTurn = { kind: 'turn', text: failure.partialText, chunkDelayMs: failure.chunkDelayMs };
  const events = responsesStream(turn, model, inputTokens);
  const created = events[0]?.data as { response?: Record<string, unknown> } | undefined;
  const upToText = events.filter((e) => e.event === 'response.created' || e.event === 'response.in_progress' || e.event === 'response.output_text.delta' || (e.event === 'response.output_item.added'));
  const failed = { ...(created?.response ?? {}), status: 'failed', error: { code: 'server_error', message: failure.message } };
  return [...upToText, { event: 'response.failed', data: { type: 'response.failed', sequence_number: events.length, response: failed } }];
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  404: 'invalid_request_error',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  503: 'server_error',
};

export function openAiError(status: number, message: string): Record<string, unknown> {
  return { error: { message, type: ERROR_TYPES[status] ?? 'server_error', param: null, code: null } };
}
