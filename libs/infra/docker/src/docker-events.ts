import type { SandboxRuntimeEvent } from '@berth/ports';
import type Docker from 'dockerode';
import { AsyncQueue, LineSplitter } from '@berth/core';

type EngineEvent = {
  Type?: string;
  Action?: string;
  id?: string;
  time?: number;
  timeNano?: number;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
};

const KINDS: readonly SandboxRuntimeEvent['kind'][] = ['die', 'oom', 'destroy', 'start'];
// Attributes the engine adds beside the container's labels.
const NON_LABEL_ATTRIBUTES = new Set(['name', 'image', 'exitCode', 'signal', 'execDuration']);

export function toRuntimeEvent(raw: EngineEvent): SandboxRuntimeEvent | null {
  const kind = KINDS.find((k) => k === raw.Action);
  if (!kind || raw.Type !== 'container') return null;
  const attributes = raw.Actor?.Attributes ?? {};
  const labels = Object.fromEntries(Object.entries(attributes).filter(([k]) => !NON_LABEL_ATTRIBUTES.has(k)));
  const exitCode = attributes['exitCode'] !== undefined ? Number(attributes['exitCode']) : null;
  const at = raw.timeNano ? new Date(Math.floor(raw.timeNano / 1e6)) : new Date((raw.time ?? 0) * 1000);
  return {
    kind,
    containerId: raw.Actor?.ID ?? raw.id ?? '',
    name: attributes['name'] ?? '',
    labels,
    exitCode: Number.isFinite(exitCode) ? exitCode : null,
    at: at.toISOString(),
  };
}

/**
 * Docker's event stream for containers carrying `labelFilter`, as an async iterable that ends when
 * `signal` aborts. A dropped connection (engine restart) is re-opened from the last event's time,
 * and replayed events are dropped by (id, action, timeNano), so no death is missed or doubled.
 */
export function watchEvents(docker: Docker, labelFilter: readonly string[], signal: AbortSignal): AsyncIterable<SandboxRuntimeEvent> {
  const queue = new AsyncQueue<SandboxRuntimeEvent>();
  const seen = new Set<string>();
  let since: number | undefined;
  let backoffMs = 100;

  const connect = async (): Promise<void> => {
    while (!signal.aborted) {
      try {
        const stream = (await docker.getEvents({
          filters: { type: ['container'], label: [...labelFilter], event: [...KINDS] },
          ...(since !== undefined ? { since } : {}),
          abortSignal: signal,
        } as Docker.GetEventsOptions)) as NodeJS.ReadableStream;
        backoffMs = 100;
        await new Promise<void>((resolve) => {
          const splitter = new LineSplitter((line) => {
            if (line.trim() === '') return;
            let raw: EngineEvent;
            try {
              raw = JSON.parse(line) as EngineEvent;
            } catch {
              return;
            }
            const key = `${raw.Actor?.ID ?? raw.id}:${raw.Action}:${raw.timeNano ?? raw.time}`;
            if (seen.has(key)) return;
            seen.add(key);
            if (seen.size > 10_000) seen.delete(seen.values().next().value as string);
            if (raw.time) since = raw.time;
            const event = toRuntimeEvent(raw);
            if (event) queue.push(event);
          });
          stream.on('data', (chunk: Buffer) => splitter.write(chunk));
          stream.on('end', resolve);
          stream.on('close', resolve);
          stream.on('error', () => resolve());
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } catch {
        // Engine unreachable: retry with a bounded backoff until aborted.
      }
      if (signal.aborted) break;
      await new Promise((r) => setTimeout(r, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 2000);
    }
    queue.end();
  };
  void connect();
  return queue;
}
