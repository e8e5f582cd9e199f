import { intOption, requiredOption } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Endpoint = {
  id: string;
  url: string;
  name: string;
  description: string;
  enabled_events: string[];
  state: string;
  disabled_reason: string;
  failing_since: string | null;
  next_retry_at: string | null;
  created_at: string;
  updated_at: string;
  signing_secret?: string;
};
type Attempt = { attempted_at: string; status_code: number | null; error: string | null; duration_ms: number };
type Delivery = { id: string; event_id: string; event_type: string; state: string; attempt_count: number; attempts: Attempt[]; next_attempt_at: string | null; delivered_at: string | null; redelivery_of: string | null; created_at: string };

/** The state in one phrase: why Berth disabled it, and since when every attempt has failed. */
const stateOf = (e: Endpoint): string => [e.state, e.disabled_reason && `(${e.disabled_reason})`, e.failing_since && `failing since ${e.failing_since}`].filter(Boolean).join(' ');

const endpointOutput = (e: Endpoint): Output => ({
  json: e,
  human: details([
    ['id', e.id],
    ['url', e.url],
    ['name', e.name],
    ['description', e.description],
    ['events', e.enabled_events.join(', ')],
    ['state', stateOf(e)],
    ['next retry', e.next_retry_at],
    ['created', e.created_at],
    // Shown once, on create and on rotate-secret: the API never answers it again.
    ...(e.signing_secret ? ([['signing secret', `${e.signing_secret}  (shown once: store it now)`]] as const) : []),
  ]),
});

const deliveryOutput = (d: Delivery): Output => ({
  json: d,
  human: [
    details([
      ['id', d.id],
      ['event', `${d.event_type} ${d.event_id}`],
      ['state', d.state],
      ['attempts', d.attempt_count],
      ['next attempt', d.next_attempt_at],
      ['delivered', d.delivered_at],
      ['redelivery of', d.redelivery_of],
    ]),
    table(d.attempts, [
      { header: 'attempted', value: (a) => a.attempted_at },
      { header: 'status', value: (a) => display(a.status_code) },
      { header: 'ms', value: (a) => String(a.duration_ms) },
      { header: 'error', value: (a) => display(a.error) },
    ], '(no attempt yet)'),
  ].join('\n\n'),
});

/** `--event` may repeat or hold a comma-separated list. */
function events(o: Record<string, unknown>): string[] | undefined {
  const raw = o['event'];
  const list = (Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : []).flatMap((v: string) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return list.length > 0 ? list : undefined;
}

const eventOption = { event: { type: 'string', multiple: true, help: 'event type to deliver (repeat, or a comma-separated list), e.g. session.status_idled' } } as const;

export const webhookCommands: readonly Command[] = [
  {
    name: ['webhooks', 'create'],
    args: [],
    options: { url: { type: 'string', help: 'receiver URL (public http(s))' }, ...eventOption, name: { type: 'string', help: 'display name' }, description: { type: 'string', help: 'description' } },
    summary: 'register a webhook endpoint (prints its signing secret, once)',
    run: async ({ api }, _a, o) => {
      const enabled = events(o);
      if (!enabled) throw new UsageError('--event is required (at least one event type)');
      return endpointOutput(await api.request<Endpoint>('POST', '/v1/webhooks', { body: { url: requiredOption(o, 'url'), enabled_events: enabled, name: str(o, 'name'), description: str(o, 'description') } }));
    },
  },
  {
    name: ['webhooks', 'list'],
    args: [],
    options: { limit: { type: 'string', help: 'page size' } },
    summary: 'list webhook endpoints',
    run: async ({ api }, _a, o) => {
      const page = await api.request<{ data: Endpoint[] }>('GET', '/v1/webhooks', { query: { limit: intOption(o, 'limit', 1) } });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (e) => e.id },
          { header: 'url', value: (e) => e.url },
          { header: 'state', value: stateOf },
          { header: 'events', value: (e) => e.enabled_events.join(',') },
        ]),
      };
    },
  },
  {
    name: ['webhooks', 'get'],
    args: ['webhook'],
    options: {},
    summary: 'show a webhook endpoint',
    run: async ({ api }, a) => endpointOutput(await api.request<Endpoint>('GET', `/v1/webhooks/${a.webhook}`)),
  },
  {
    name: ['webhooks', 'update'],
    args: ['webhook'],
    options: {
      url: { type: 'string', help: 'new receiver URL' },
      ...eventOption,
      name: { type: 'string', help: 'display name' },
      description: { type: 'string', help: 'description' },
      enable: { type: 'boolean', help: 'resume deliveries: what waited goes out (clears an automatic disable)' },
      disable: { type: 'boolean', help: 'pause deliveries (events keep being planned and wait, up to their 3 days)' },
    },
    summary: 'change a webhook endpoint (only the options given)',
    run: async ({ api }, a, o) => {
      if (o['enable'] && o['disable']) throw new UsageError('--enable and --disable exclude each other');
      const state = o['enable'] ? 'enabled' : o['disable'] ? 'disabled' : undefined;
      const body = { url: str(o, 'url'), enabled_events: events(o), name: str(o, 'name'), description: str(o, 'description'), state };
      return endpointOutput(await api.request<Endpoint>('POST', `/v1/webhooks/${a.webhook}`, { body }));
    },
  },
  {
    name: ['webhooks', 'rotate-secret'],
    args: ['webhook'],
    options: {},
    summary: 'replace the signing secret (the old one stops at once; prints the new one, once)',
    run: async ({ api }, a) => {
      const res = await api.request<{ signing_secret: string }>('POST', `/v1/webhooks/${a.webhook}/regenerate_signing_secret`);
      return { json: res, human: `signing secret: ${res.signing_secret}  (shown once: store it now)` };
    },
  },
  {
    name: ['webhooks', 'delete'],
    args: ['webhook'],
    options: {},
    summary: 'delete a webhook endpoint and its delivery log',
    run: async ({ api }, a) => ({ json: await api.request<unknown>('DELETE', `/v1/webhooks/${a.webhook}`), human: `deleted ${a.webhook}` }),
  },
  {
    name: ['webhooks', 'deliveries'],
    args: ['webhook'],
    options: { state: { type: 'string', help: 'pending | delivered | failed' }, limit: { type: 'string', help: 'page size' } },
    summary: 'the delivery log of an endpoint, newest first',
    run: async ({ api }, a, o) => {
      const page = await api.request<{ data: Delivery[] }>('GET', `/v1/webhooks/${a.webhook}/deliveries`, { query: { state: str(o, 'state'), limit: intOption(o, 'limit', 1) } });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (d) => d.id },
          { header: 'event', value: (d) => d.event_type },
          { header: 'state', value: (d) => d.state },
          { header: 'attempts', value: (d) => String(d.attempt_count) },
          { header: 'last status', value: (d) => display(d.attempts.at(-1)?.status_code ?? d.attempts.at(-1)?.error) },
          { header: 'created', value: (d) => d.created_at },
        ]),
      };
    },
  },
  {
    name: ['webhooks', 'delivery'],
    args: ['webhook', 'delivery'],
    options: {},
    summary: 'one delivery with its attempts',
    run: async ({ api }, a) => deliveryOutput(await api.request<Delivery>('GET', `/v1/webhooks/${a.webhook}/deliveries/${a.delivery}`)),
  },
  {
    name: ['webhooks', 'redeliver'],
    args: ['webhook', 'delivery'],
    options: {},
    summary: 'send a delivered or failed delivery’s event again',
    run: async ({ api }, a) => deliveryOutput(await api.request<Delivery>('POST', `/v1/webhooks/${a.webhook}/deliveries/${a.delivery}/redeliver`)),
  },
];
