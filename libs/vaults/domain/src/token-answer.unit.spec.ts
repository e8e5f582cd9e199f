import { ERROR_BODY_LIMIT, readTokenAnswer, scrubbed, type TokenAnswer } from './token-answer';

const SECRETS = ['rt_secret_1', 'cs_secret_1'];
const answered = (status: number, body: unknown, over: Partial<Extract<TokenAnswer, { kind: 'answered' }>> = {}): TokenAnswer => ({
  kind: 'answered',
  status,
  contentType: 'application/json',
  body: typeof body === 'string' ? body : JSON.stringify(body),
  truncated: false,
  ...over,
});
const read = (answer: TokenAnswer) => readTokenAnswer(answer, SECRETS);

describe("a token endpoint's answer", () => {
  it('a 2xx bearer token is a grant: the rotated refresh token if one came, expires_in in ms (a numeric string too), none without it', () => {
    expect(read(answered(200, { access_token: 'at_2', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_2' }))).toEqual({
      kind: 'refreshed',
      grant: { accessToken: 'at_2', refreshToken: 'rt_2', expiresInMs: 3_600_000 },
    });
    expect(read(answered(200, { access_token: 'at_2', token_type: 'bearer', expires_in: '90' }))).toEqual({ kind: 'refreshed', grant: { accessToken: 'at_2', refreshToken: null, expiresInMs: 90_000 } });
    expect(read(answered(201, { access_token: 'at_2' }))).toEqual({ kind: 'refreshed', grant: { accessToken: 'at_2', refreshToken: null, expiresInMs: null } });
  });

  it('a 2xx without a usable token is tried again, and its body (it may hold tokens) is never kept; a token of another type never will do', () => {
    for (const body of ['<html>proxy</html>', { token_type: 'Bearer' }, { access_token: 'at', expires_in: -5 }, { access_token: 'at', refresh_token: 7 }]) {
      const outcome = read(answered(200, body));
      expect(outcome).toMatchObject({ kind: 'failed', definitive: false, error: { kind: 'failed', http_response: { status_code: 200, body: '', body_truncated: false } } });
    }
    expect(read(answered(200, { access_token: 'at_2' }, { truncated: true }))).toMatchObject({ kind: 'failed', definitive: false, error: { message: expect.stringContaining('larger than Berth reads') } });
    const dpop = read(answered(200, { access_token: 'at_dpop', token_type: 'DPoP' }));
    expect(dpop).toMatchObject({ kind: 'failed', definitive: true, error: { message: 'the token endpoint answered 200 without a token Berth can use: token_type "DPoP" (the egress sends bearer tokens only)' } });
    expect(JSON.stringify(dpop)).not.toContain('at_dpop');
  });

  it('invalid_grant, invalid_client, any other 4xx and a redirect are definitive; the error body is kept scrubbed', () => {
    const grant = read(answered(400, { error: 'invalid_grant', error_description: 'refresh token rt_secret_1 was already used' }));
    expect(grant).toEqual({
      kind: 'failed',
      definitive: true,
      error: {
        kind: 'failed',
        message: 'the token endpoint answered 400 invalid_grant: refresh token [redacted] was already used',
        http_response: { status_code: 400, content_type: 'application/json', body: '{"error":"invalid_grant","error_description":"refresh token [redacted] was already used"}', body_truncated: false },
      },
    });
    expect(read(answered(401, { error: 'invalid_client' }))).toMatchObject({ definitive: true, error: { message: 'the token endpoint answered 401 invalid_client' } });
    expect(read(answered(404, 'not found', { contentType: 'text/plain' }))).toMatchObject({ definitive: true, error: { message: 'the token endpoint answered 404', http_response: { body: 'not found', content_type: 'text/plain' } } });
    expect(read(answered(302, ''))).toMatchObject({ definitive: true, error: { message: expect.stringContaining('redirects are not followed') } });
  });

  it('a 5xx, 429, 408 or temporarily_unavailable is tried again', () => {
    for (const [status, body] of [[500, 'oops'], [503, { error: 'temporarily_unavailable' }], [429, ''], [408, ''], [400, { error: 'server_error' }]] as const) {
      expect([status, read(answered(status, body))]).toEqual([status, expect.objectContaining({ kind: 'failed', definitive: false })]);
    }
  });

  it('an unreachable endpoint is a connect_error tried again; one Berth may not reach, a connect_error that is final', () => {
    expect(read({ kind: 'unreachable', error: 'connect ECONNREFUSED 127.0.0.1:9' })).toEqual({
      kind: 'failed',
      definitive: false,
      error: { kind: 'connect_error', message: 'the token endpoint could not be reached: connect ECONNREFUSED 127.0.0.1:9', http_response: null },
    });
    expect(read({ kind: 'refused', error: '10.0.0.5 is not a public address (private)' })).toMatchObject({ definitive: true, error: { kind: 'connect_error', message: 'the token endpoint may not be reached: 10.0.0.5 is not a public address (private)' } });
  });

  it('keeps at most the limit of an error body, saying it was cut', () => {
    const outcome = read(answered(500, 'x'.repeat(ERROR_BODY_LIMIT + 10)));
    expect(outcome).toMatchObject({ error: { http_response: { body_truncated: true } } });
    expect(outcome.kind === 'failed' && outcome.error.http_response?.body.length).toBe(ERROR_BODY_LIMIT);
  });
});

describe('scrubbing an answer', () => {
  it('replaces known secrets and every token-named field, in JSON and in forms', () => {
    const text = '{"access_token":"at_9","refresh_token":"rt \\"q\\"","id_token":"x","client_secret":"y","note":"cs_secret_1"} access_token=at_9&refresh_token=r&x=1';
    expect(scrubbed(text, SECRETS)).toBe(
      '{"access_token":"[redacted]","refresh_token":"[redacted]","id_token":"[redacted]","client_secret":"[redacted]","note":"[redacted]"} access_token=[redacted]&refresh_token=[redacted]&x=1',
    );
    expect(scrubbed('nothing secret', ['', ...SECRETS])).toBe('nothing secret');
  });
});
