import type { PublicEvent } from '../sse/event-tail';

/** Human output: aligned tables, key/value details and one-line events. JSON output bypasses all of this. */

export type Column<T> = Readonly<{ header: string; value: (row: T) => string }>;

export function table<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): string {
  if (rows.length === 0) return empty;
  const cells = rows.map((r) => columns.map((c) => oneLine(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i].length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

export function details(pairs: readonly (readonly [string, unknown])[]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${display(v)}`).join('\n');
}

export function display(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** Text of a content array (or a plain string); non-text blocks are named. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; text?: string }) => (b?.type === 'text' && typeof b.text === 'string' ? b.text : `[${b?.type ?? 'content'}]`))
    .join('\n');
}

/** One readable line per event, for `tail` and for `send --wait` progress. */
export function eventLine(e: PublicEvent, seq?: number): string {
  const head = `${seq === undefined ? '' : `#${seq} `}${e.type}`;
  const summary = eventSummary(e);
  return summary ? `${head}  ${summary}` : head;
}

function eventSummary(e: PublicEvent): string {
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
      return truncate(oneLine(contentText(e.content)), 200);
    case 'agent.tool_use':
      return `${display(e.name)} ${truncate(JSON.stringify(e.input ?? {}), 160)}${e.evaluated_permission === 'ask' ? '  (needs approval)' : ''}  [${e.id}]`;
    case 'agent.mcp_tool_use':
      return `${display(e.mcp_server_name)}.${display(e.name)} ${truncate(JSON.stringify(e.input ?? {}), 160)}${e.evaluated_permission === 'ask' ? '  (needs approval)' : ''}  [${e.id}]`;
    case 'agent.tool_result':
      return `${e.is_error ? 'error' : 'ok'} for ${display(e.tool_use_id)}: ${truncate(oneLine(contentText(e.content)), 160)}`;
    case 'agent.mcp_tool_result':
      return `${e.is_error ? 'error' : 'ok'} for ${display(e.mcp_tool_use_id)}: ${truncate(oneLine(contentText(e.content)), 160)}`;
    case 'user.tool_confirmation':
      return `${display(e.result)} ${display(e.tool_use_id)}`;
    case 'agent.custom_tool_use':
      return `${display(e.name)} ${truncate(JSON.stringify(e.input ?? {}), 160)}  (waits for your result)  [${e.id}]`;
    case 'user.custom_tool_result':
      return `${e.is_error ? 'error' : 'ok'} for ${display(e.custom_tool_use_id)}: ${truncate(oneLine(contentText(e.content)), 160)}`;
    case 'session.status_idle': {
      const stop = (e.stop_reason ?? {}) as { type?: string; event_ids?: string[] };
      if (stop.type === 'requires_action') return `requires_action: ${(stop.event_ids ?? []).join(', ')}`;
      const failure = e.berth_failure as { reason?: string; message?: string } | undefined;
      return [stop.type ?? '', failure ? `${failure.reason ?? ''} ${failure.message ?? ''}`.trim() : ''].filter(Boolean).join(': ');
    }
    case 'session.error': {
      const err = (e.error ?? {}) as { type?: string; message?: string };
      return `${err.type ?? 'error'}: ${err.message ?? ''}`;
    }
    case 'session.usage': {
      const u = (e.usage ?? {}) as { input_tokens?: number; output_tokens?: number };
      return `${u.input_tokens ?? 0} in / ${u.output_tokens ?? 0} out tokens`;
    }
    default:
      return '';
  }
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ⏎ ');
const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function formatError(e: { message: string; code?: string | null; type?: string; status?: number }): string {
  const code = e.code ?? (e.type && e.type !== 'api_error' ? e.type : null);
  const tag = [code ? `code ${code}` : null, e.status ? `HTTP ${e.status}` : null].filter(Boolean).join(', ');
  return `error: ${e.message}${tag ? ` (${tag})` : ''}`;
}
