import type { Logger } from '@berth/ports';

/** A logger that drops every line (tests that do not look at logs). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

export type RecordedLine = Readonly<{ level: 'debug' | 'info' | 'warn' | 'error'; message: string; fields: Readonly<Record<string, unknown>> }>;

/** A logger that keeps every line (with its child fields merged in), for tests that assert what was logged. */
export function recordingLogger(): { log: Logger; lines: RecordedLine[] } {
  const lines: RecordedLine[] = [];
  const make = (bound: Readonly<Record<string, unknown>>): Logger => {
    const at = (level: RecordedLine['level']) => (message: string, fields: Readonly<Record<string, unknown>> = {}) => void lines.push({ level, message, fields: { ...bound, ...fields } });
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (fields) => make({ ...bound, ...fields }) };
  };
  return { log: make({}), lines };
}
