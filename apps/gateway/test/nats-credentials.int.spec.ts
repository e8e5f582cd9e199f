import { call } from './support/api';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/** The HTTP side of outside subscribers' NATS credentials; the NATS side is libs/testing/src/nats/subscriber-credentials.int.spec.ts. */
describe('NATS credentials over HTTP', () => {
  let gw: GatewayHarness;

  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false });
  });
  afterAll(() => gw.close());

  it('mints a credential limited to the caller, shows it once, and lists it without it', async () => {
    const created = await call(gw.url, gw.keyA, 'POST', '/v1/nats_credentials', { name: 'dashboard' });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      type: 'nats_credential',
      id: expect.stringMatching(/^ncred_/),
      name: 'dashboard',
      public_key: gw.issuer.issued.at(-1)?.publicKey,
      revoked_at: null,
      creds: expect.stringContaining('BEGIN NATS USER JWT'),
      connection: { servers: gw.issuer.servers, inbox_prefix: '_INBOX.owner.owner_a', stream: 'OWNER_EVT_owner_a', subjects: 'session.*.evt.owner_a.*' },
    });
    expect(gw.issuer.issued.at(-1)).toMatchObject({ ownerId: 'owner_a', name: 'dashboard' });

    const listed = await call(gw.url, gw.keyA, 'GET', '/v1/nats_credentials');
    expect(listed.json.data.map((c: { id: string }) => c.id)).toContain(created.json.id);
    expect(listed.text).not.toContain('BEGIN NATS USER JWT');
    expect((await call(gw.url, gw.keyB, 'GET', '/v1/nats_credentials')).json.data).toEqual([]);
  });

  it('revokes: the revocation list the server gets names the key, and revoking again keeps the first time', async () => {
    const created = await call(gw.url, gw.keyA, 'POST', '/v1/nats_credentials', {});
    const kept = await call(gw.url, gw.keyA, 'POST', '/v1/nats_credentials', { name: 'kept' });
    expect(created.json.name).toBe('default');

    expect((await call(gw.url, gw.keyB, 'DELETE', `/v1/nats_credentials/${created.json.id}`)).status).toBe(404);
    expect(gw.issuer.revocations).toEqual({});

    const revoked = await call(gw.url, gw.keyA, 'DELETE', `/v1/nats_credentials/${created.json.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.revoked_at).not.toBeNull();
    expect(Object.keys(gw.issuer.revocations)).toEqual([created.json.public_key]);
    expect(gw.issuer.revocations[created.json.public_key]).toBeGreaterThanOrEqual(Math.floor(Date.parse(revoked.json.revoked_at) / 1000));

    const again = await call(gw.url, gw.keyA, 'DELETE', `/v1/nats_credentials/${created.json.id}`);
    expect(again.json.revoked_at).toBe(revoked.json.revoked_at);
    expect(Object.keys(gw.issuer.revocations)).not.toContain(kept.json.public_key);
  });

  it('answers bad ids with 400 and unknown ones with 404', async () => {
    expect((await call(gw.url, gw.keyA, 'DELETE', '/v1/nats_credentials/nope')).json.error.type).toBe('invalid_request_error');
    expect((await call(gw.url, gw.keyA, 'DELETE', '/v1/nats_credentials/ncred_missing')).status).toBe(404);
    expect((await call(gw.url, gw.keyA, 'POST', '/v1/nats_credentials', { name: '' })).status).toBe(400);
  });

  it('answers 503 naming the missing setting on a server without an issuer', async () => {
    const bare = await startGateway({ turnRunner: false, subscriberIssuer: false });
    try {
      const res = await call(bare.url, bare.keyA, 'POST', '/v1/nats_credentials', {});
      expect(res.status).toBe(503);
      expect(res.json.error.message).toContain('BERTH_NATS_ISSUER');
      expect((await call(bare.url, bare.keyA, 'GET', '/v1/nats_credentials')).json.data).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
