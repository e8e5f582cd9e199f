import type { ApiClient } from '../api/client';
import type { CommandSpec, OptionValues } from '../args';

export type Io = Readonly<{ out: (text: string) => void; err: (text: string) => void }>;

export type Context = Readonly<{
  api: ApiClient;
  io: Io;
  json: boolean;
  /** Aborted on Ctrl-C: streaming commands stop cleanly. */
  signal: AbortSignal;
  fetchImpl: typeof fetch;
  /** First reconnect delay for streams (tests shorten it). */
  streamBackoffMs?: number;
  /** The process environment (local commands read the same variables the services do). */
  env: Readonly<Record<string, string | undefined>>;
}>;

/** What a command prints: `json` under --json, `human` otherwise. Streaming commands print as they go and return nothing. */
export type Output = Readonly<{ json: unknown; human: string }>;

export type Command = CommandSpec &
  Readonly<{
    run: (ctx: Context, args: Record<string, string>, options: OptionValues) => Promise<Output | void>;
    /** Works on this machine without calling the API (so needs no API key). */
    local?: true;
  }>;

export const str = (values: OptionValues, name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
