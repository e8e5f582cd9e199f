import fc from 'fast-check';
import type { RouteSpec } from '../src/http/route';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { seedResources } from './support/api';
import { concretePath, routeTable, validBody, type OwnedIds } from './support/route-samples';

type Attempt = Readonly<{ method: string; path: string; query: string; headers: Record<string, string>; body: string | undefined }>;

/** Sends a request and reads the answer (a 200 stream is closed right away). */
async function send(base: string, attempt: Attempt): Promise<{ status: number; body: string }> {
  const controller = new AbortController();
  const res = await fetch(base + attempt.path + attempt.query, { method: attempt.method, headers: attempt.headers, body: attempt.body, signal: controller.signal });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, body: '' };
  }
  return { status: res.status, body: await res.text() };
}

/** A 4xx answer is an Anthropic-style error body with a stable code and a message. */
function isErrorBody(text: string): boolean {
  try {
    const body = JSON.parse(text) as { type?: unknown; error?: { type?: unknown; message?: unknown; code?: unknown } };
    return body.type === 'error' && typeof body.error?.type === 'string' && typeof body.error.message === 'string' && /^[A-Z][A-Z0-9_]+$/.test(String(body.error.code));
  } catch {
    return false;
  }
}

const junkString = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '-1', '0', '1e309', 'null', '[]', '{}', '%00', '../', '__proto__', 'a'.repeat(300), '9'.repeat(20)));
const jsonish = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant({ __proto__: { polluted: true } }), fc.dictionary(fc.constantFrom('name', 'model', 'agent', 'environment_id', 'events', 'config', 'metadata', 'title', 'version', 'type', 'content', 'initial_events'), fc.jsonValue({ maxDepth: 3 })));

/** Mutates a valid body so the fuzz also reaches the deeper branches, not only the first schema check. */
const bodyFor = (route: RouteSpec, ids: OwnedIds) =>
  fc.oneof(
    fc.constant(undefined),
    jsonish.map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 60 }),
    fc.constant('{"unterminated": '),
    route.body ? fc.tuple(fc.constantFrom(...Object.keys((validBody(route, ids) ?? {}) as object), 'extra'), fc.jsonValue({ maxDepth: 3 })).map(([k, v]) => JSON.stringify({ ...(validBody(route, ids) as object), [k]: v })) : fc.constant(undefined),
  );

const queryArb = fc
  .array(fc.tuple(fc.constantFrom('limit', 'page', 'order', 'types[]', 'statuses[]', 'after', 'version', 'include_archived', 'created_at[gte]', 'agent_id', 'beta', 'event_deltas[]', '__proto__[x]', 'scope_id', 'ids[]'), junkString), { maxLength: 4 })
  .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&') : ''));

const headerArb = (key: string) =>
  fc.record(
    {
      'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', 'multipart/form-data', 'application/x-tar'),
      'idempotency-key': fc.string({ minLength: 0, maxLength: 300 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
      'last-event-id': junkString.map((s) => s.replace(/[^\x20-\x7e]/g, '')),
      'content-encoding': fc.constantFrom('identity', 'gzip', 'br'),
    },
    { requiredKeys: [] },
  ).map((h) => ({ 'x-api-key': key, ...h }));

describe('property-based fuzz of every route: never a 5xx', () => {
  let gw: GatewayHarness;
  let ids: OwnedIds;

  beforeAll(async () => {
    gw = await startGateway();
    ids = await seedResources(gw, gw.keyA);
  });
  afterAll(() => gw.close());

  it('answers every generated request below 500, with an Anthropic-style body for every 4xx', async () => {
    const routes = routeTable(gw);
    const pathFor = (route: RouteSpec) =>
      fc.oneof(
        fc.constant(concretePath(route, ids)),
        fc.constant(route.path.replace(/\{\w+\}/g, 'sesn_unknown')),
        junkString.map((s) => route.path.replace(/\{\w+\}/g, encodeURIComponent(s) || 'x')),
      );
    const attempt = fc.constantFrom(...routes).chain((route) =>
      fc.record({
        method: fc.constant(route.method),
        path: pathFor(route),
        query: queryArb,
        headers: headerArb(gw.keyA),
        body: route.method === 'GET' ? fc.constant(undefined) : bodyFor(route, ids),
      }),
    );
    await fc.assert(
      fc.asyncProperty(attempt, async (a) => {
        const { status, body } = await send(gw.url, a);
        return status < 500 && (status < 400 || isErrorBody(body));
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  it('maps framework-level failures to Anthropic-style 4xx bodies', async () => {
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(gw.url + path, { method: 'POST', headers: { 'x-api-key': gw.keyA, 'content-type': 'application/json', ...headers }, body });
    const malformed = await post('/v1/agents', '{"name": ');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'request body is not valid JSON', code: 'INVALID_BODY' } });
    const large = await post('/v1/agents', JSON.stringify({ name: 'x', model: 'm', system: 'y'.repeat(1_100_000) }));
    expect(large.status).toBe(413);
    expect(((await large.json()) as any).error).toMatchObject({ type: 'request_too_large', code: 'PAYLOAD_TOO_LARGE' });
    const unknown = await fetch(`${gw.url}/v1/nowhere`, { headers: { 'x-api-key': gw.keyA } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error).toMatchObject({ type: 'not_found_error', code: 'NOT_FOUND' });
    const field = await post('/v1/agents', JSON.stringify({ name: 'x', model: 42 }));
    expect(field.status).toBe(400);
    expect(((await field.json()) as any).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'model' } });
  });
});
