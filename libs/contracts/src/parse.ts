import type { z } from 'zod';
import { ValidationError } from '@berth/core';
import { CommandDataSchemas, CommandMetaSchema, type CommandType, type SessionCommand } from './commands';
import { EventDataSchemas, RecordedEventMetaSchema, type EventType, type RecordedEvent } from './events';

/** Turns the first zod issue into a ValidationError that names the field (dotted path). */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  // An unknown key is named by its own path, not its object's.
  const keys = issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : [];
  const path = [prefix, ...issue.path.map(String), ...keys].filter(Boolean).join('.');
  const message = keys.length > 0 ? 'is not a field Berth accepts here' : issue.message;
  throw new ValidationError(path ? `${path}: ${message}` : message, path || undefined);
}

const isCommandType = (t: unknown): t is CommandType => typeof t === 'string' && Object.hasOwn(CommandDataSchemas, t);
const isEventType = (t: unknown): t is EventType => typeof t === 'string' && Object.hasOwn(EventDataSchemas, t);

/** Validates a command at a process edge (consumer decode). */
export function parseCommand(input: unknown): SessionCommand {
  const raw = (input ?? {}) as { type?: unknown; data?: unknown; meta?: unknown };
  if (!isCommandType(raw.type)) throw new ValidationError(`type: unknown command type ${JSON.stringify(raw.type)}`, 'type');
  const meta = parseWith(CommandMetaSchema, raw.meta, 'meta');
  const data = parseWith(CommandDataSchemas[raw.type], raw.data ?? {}, 'data');
  return { type: raw.type, data, meta } as SessionCommand;
}

/** Validates a recorded event at a process edge (event consumer decode). */
export function parseRecordedEvent(input: unknown): RecordedEvent {
  const raw = (input ?? {}) as Record<string, unknown>;
  if (!isEventType(raw.type)) throw new ValidationError(`type: unknown event type ${JSON.stringify(raw.type)}`, 'type');
  const meta = parseWith(RecordedEventMetaSchema, raw);
  const data = parseWith(EventDataSchemas[raw.type], raw.data, 'data');
  return { ...meta, type: raw.type, data } as RecordedEvent;
}
