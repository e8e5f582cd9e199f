import type { McpOAuthRefresh } from '@berth/contracts';
import { tokenRequest } from './token-request';

const config = (type: McpOAuthRefresh['token_endpoint_auth']['type'], over: Partial<McpOAuthRefresh> = {}): McpOAuthRefresh => ({
  token_endpoint: 'https://auth.example.com/token',
  client_id: 'berth client',
  token_endpoint_auth: { type },
  scope: null,
  resource: null,
  ...over,
});
const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

describe('the refresh_token grant (RFC 6749 §6) with each client authentication (§2.3.1)', () => {
  it('none: client_id in the form, no Authorization', () => {
    const request = tokenRequest(config('none'), { refresh_token: 'rt/1+2', client_secret: null });
    expect(request.url).toBe('https://auth.example.com/token');
    expect(request.headers).toEqual({ 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
    expect(form(request.body)).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt/1+2', client_id: 'berth client' });
  });

  it('client_secret_post: the id and secret in the form', () => {
    const request = tokenRequest(config('client_secret_post'), { refresh_token: 'rt', client_secret: 's&cret=1' });
    expect(form(request.body)).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt', client_id: 'berth client', client_secret: 's&cret=1' });
    expect(request.headers['authorization']).toBeUndefined();
  });

  it('client_secret_basic: the form-encoded id and secret as HTTP Basic, neither in the form', () => {
    const request = tokenRequest(config('client_secret_basic'), { refresh_token: 'rt', client_secret: 's:é/1' });
    expect(form(request.body)).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt' });
    const basic = Buffer.from((request.headers['authorization'] ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
    expect(basic).toBe('berth+client:s%3A%C3%A9%2F1');
  });

  it('sends the scope and resource indicator when configured', () => {
    const request = tokenRequest(config('none', { scope: 'mcp read', resource: 'https://mcp.example.com/' }), { refresh_token: 'rt', client_secret: null });
    expect(form(request.body)).toMatchObject({ scope: 'mcp read', resource: 'https://mcp.example.com/' });
  });

  it('refuses to authenticate with a secret the credential does not hold', () => {
    expect(() => tokenRequest(config('client_secret_basic'), { refresh_token: 'rt', client_secret: null })).toThrow('client_secret_basic needs the client secret, and the credential holds none');
  });
});
