import { isModelKeyName, modelEndpointFrom, modelErrorResponse, modelRequestHeaders, modelUpstreamUrl } from './model-route';

const server = { baseUrl: 'http://127.0.0.1:9000', trustedHosts: [] };

describe('the model endpoint of a sandbox', () => {
  it("is the server's default unless the environment names its own", () => {
    expect(modelEndpointFrom({}, server)).toEqual({ baseUrl: 'http://127.0.0.1:9000', keyName: 'BERTH_MODEL_API_KEY', trusted: true });
    expect(modelEndpointFrom({ model: { api_key_env: 'BERTH_MODEL_KEY_TEAM' } }, server)).toMatchObject({ keyName: 'BERTH_MODEL_KEY_TEAM' });
    expect(modelEndpointFrom({}, { baseUrl: null, trustedHosts: [] })).toBeNull();
  });

  it("trusts an environment's own endpoint only when it is the server's or on a host the operator listed", () => {
    expect(modelEndpointFrom({ model: { base_url: 'https://api.anthropic.com' } }, server)).toMatchObject({ baseUrl: 'https://api.anthropic.com', trusted: false });
    expect(modelEndpointFrom({ model: { base_url: 'http://127.0.0.1:9000/' } }, server)).toMatchObject({ trusted: true });
    expect(modelEndpointFrom({ model: { base_url: 'http://127.0.0.1:4222' } }, server)).toMatchObject({ trusted: false });
    expect(modelEndpointFrom({ model: { base_url: 'http://127.0.0.1:4222' } }, { ...server, trustedHosts: ['127.0.0.1'] })).toMatchObject({ trusted: true });
    expect(modelEndpointFrom({ model: { base_url: 'file:///etc/passwd' } }, server)).toBeNull();
  });

  it('names keys only from the model-key namespace', () => {
    expect(['BERTH_MODEL_API_KEY', 'BERTH_MODEL_KEY_TEAM_A'].every(isModelKeyName)).toBe(true);
    expect(['BERTH_STORE_URL', 'NATS_URL', 'PATH', 'HOME', 'BERTH_MODEL_BASE_URL', 'BERTH_MODEL_KEY_', 'berth_model_api_key'].some(isModelKeyName)).toBe(false);
  });
});

describe('forwarding a model request', () => {
  it('appends the API path to the base URL, keeping its prefix', () => {
    expect(modelUpstreamUrl('https://gw.example/anthropic/', '/v1/messages?beta=true')?.toString()).toBe('https://gw.example/anthropic/v1/messages?beta=true');
    expect(modelUpstreamUrl('http://127.0.0.1:9000', '/api/hello')?.toString()).toBe('http://127.0.0.1:9000/api/hello');
  });

  it('forwards nothing outside the model API, however the path is spelled', () => {
    for (const path of ['/', '/containers/create', '/v1', '/v1/../containers/json', '/v1/%2e%2e/containers/json', '//evil.example/v1/messages', 'v1/messages']) {
      expect(modelUpstreamUrl('http://127.0.0.1:2375', path)).toBeNull();
    }
    expect(modelUpstreamUrl('https://gw.example/anthropic', '/v1/../../v1/messages')).toBeNull();
  });

  it("replaces the harness's placeholder credential with the real key in the header its API expects", () => {
    const incoming = { 'x-api-key': 'placeholder', authorization: 'Bearer placeholder', 'content-type': 'application/json', connection: 'keep-alive, x-secret-hop', 'x-secret-hop': '1', host: '127.0.0.1:3128', 'anthropic-version': '2023-06-01' };
    expect(modelRequestHeaders(incoming, 'x-api-key', 'sk-real', 'api.anthropic.com')).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      host: 'api.anthropic.com',
      'x-api-key': 'sk-real',
    });
    expect(modelRequestHeaders(incoming, 'bearer', 'sk-real', 'api.openai.com')).toMatchObject({ authorization: 'Bearer sk-real' });
    expect(modelRequestHeaders(incoming, 'bearer', 'sk-real', 'api.openai.com')['x-api-key']).toBeUndefined();
    expect(modelRequestHeaders(incoming, 'x-api-key', null, 'local')).not.toHaveProperty('x-api-key');
  });

  it("answers its own errors in the harness's API shape, telling Claude Code not to retry", () => {
    const anthropic = modelErrorResponse('x-api-key', 502, 'unreachable');
    expect(anthropic.headers['x-should-retry']).toBe('false');
    expect(JSON.parse(anthropic.body)).toEqual({ type: 'error', error: { type: 'api_error', message: 'unreachable' } });
    expect(JSON.parse(modelErrorResponse('bearer', 502, 'unreachable').body)).toEqual({ error: { message: 'unreachable', type: 'server_error', code: 'berth_egress' } });
  });
});
