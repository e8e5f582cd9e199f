import type Anthropic from '@anthropic-ai/sdk';

/** A session event as the end-to-end tests read it: the public shape, fields by name. */
export type PublicEvent = { id: string; type: string; [key: string]: unknown };

/** Every event of a session so far, through the official SDK's paginated list, in order. */
export async function listEvents(client: Anthropic, sessionId: string): Promise<PublicEvent[]> {
  const events: PublicEvent[] = [];
  for await (const e of client.beta.sessions.events.list(sessionId)) events.push(e as unknown as PublicEvent);
  return events;
}
