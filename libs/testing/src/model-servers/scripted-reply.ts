/**
 * What a scripted model says in answer to one request. Both model servers render the same script
 * in their own wire format (Messages API blocks, Responses API items), so a test scripts a
 * conversation once and runs it against any harness.
 */
export interface ScriptedToolCall {
  /** The call id the model assigns; generated when omitted. */
  readonly id?: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  /** Responses API only: the namespace tool the function belongs to (Codex offers each MCP server as one, `mcp__<server>`). */
  readonly namespace?: string;
}

export interface ScriptedTurn {
  readonly kind: 'turn';
  /** Streamed as a thinking block (Messages) or a reasoning summary (Responses) before the text. */
  readonly thinking?: string;
  readonly text?: string;
  /** Tool calls after the text; the reply then stops with `tool_use` so the harness runs them. */
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** Pause before each streamed delta: a slow stream to interrupt. */
  readonly chunkDelayMs?: number;
  /** Characters per text delta (default 24). */
  readonly chunkSize?: number;
  readonly outputTokens?: number;
}

export interface ScriptedError {
  readonly kind: 'error';
  /** HTTP status, e.g. 500, 529 (overloaded), 429. */
  readonly status: number;
  readonly message: string;
  /** Sent as `x-should-retry`; false makes SDK-based clients give up at once instead of backing off. */
  readonly retryable: boolean;
}

/** A stream that starts normally, sends `partialText`, then fails with the API's in-stream error event. */
export interface ScriptedStreamFailure {
  readonly kind: 'stream_error';
  readonly partialText: string;
  readonly message: string;
  readonly chunkDelayMs?: number;
}

export type ScriptedReply = ScriptedTurn | ScriptedError | ScriptedStreamFailure;

type TurnOptions = Omit<ScriptedTurn, 'kind' | 'text' | 'toolCalls'>;

/** Builders for the replies tests script most. */
export const reply = {
  text: (text: string, options: TurnOptions = {}): ScriptedTurn => ({ kind: 'turn', text, ...options }),
  toolCall: (name: string, input: Record<string, unknown>, options: TurnOptions & { text?: string; id?: string; namespace?: string } = {}): ScriptedTurn => {
    const { id, namespace, ...rest } = options;
    return { kind: 'turn', ...rest, toolCalls: [{ id, name, input, ...(namespace === undefined ? {} : { namespace }) }] };
  },
  thinking: (thinking: string, text: string): ScriptedTurn => ({ kind: 'turn', thinking, text }),
  error: (status: number, message = `scripted error ${status}`, retryable = false): ScriptedError => ({
    kind: 'error',
    status,
    message,
    retryable,
  }),
  streamError: (partialText: string, message = 'Overloaded'): ScriptedStreamFailure => ({ kind: 'stream_error', partialText, message }),
} as const;

/** Splits streamed text into deltas of at most `size` characters. */
export function chunksOf(text: string, size = 24): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

/** A rough token count (4 characters a token) so usage figures grow with the conversation. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
