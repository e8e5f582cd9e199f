import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpTokenEndpoint } from './http-token-endpoint';

/** A loopback server answering each request with `answer`; records what came. */
async function server(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; seen: { headers: IncomingMessage['headers']; body: string }[]; close: () => Promise<void> }> {
  const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
  const s: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/token`,
    seen,
    close: () => {
      s.closeAllConnections();
      return new Promise((resolve) => s.close(() => resolve()));
    },
  };
}

const request = (url: string) => ({ url, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'grant_type=refresh_token&refresh_token=rt' });
const open = { allowPrivateTargets: true };

describe('the token endpoint client', () => {
  it('posts the form as given and reads the answer', async () => {
    const s = await server((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"at"}'));
    const answer = await new HttpTokenEndpoint({ policy: open, timeoutMs: 2_000, maxBytes: 1024 }).post(request(s.url));
    expect(answer).toEqual({ kind: 'answered', status: 200, contentType: 'application/json', body: '{"access_token":"at"}', truncated: false });
    expect(s.seen).toEqual([{ headers: expect.objectContaining({ 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Berth-Vaults/1', 'content-length': '41' }), body: 'grant_type=refresh_token&refresh_token=rt' }]);
    await s.close();
  });

  it('reads at most maxBytes of an answer, saying it cut it', async () => {
    const s = await server((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('x'.repeat(10_000)));
    const answer = await new HttpTokenEndpoint({ policy: open, timeoutMs: 2_000, maxBytes: 1024 }).post(request(s.url));
    expect(answer).toMatchObject({ kind: 'answered', status: 500, truncated: true });
    expect(answer.kind === 'answered' && answer.body.length).toBe(1024);
    await s.close();
  });

  it('gives up on an endpoint that does not answer within the timeout', async () => {
    const s = await server(() => undefined);
    const answer = await new HttpTokenEndpoint({ policy: open, timeoutMs: 200, maxBytes: 1024 }).post(request(s.url));
    expect(answer).toEqual({ kind: 'unreachable', error: 'no answer within 200 ms' });
    await s.close();
  });

  it('connects to no address the target policy refuses: a literal, or one a name resolves to, and no plain http', async () => {
    const s = await server((_req, res) => res.writeHead(200).end('{}'));
    const strict = new HttpTokenEndpoint({ policy: { allowPrivateTargets: false }, timeoutMs: 2_000, maxBytes: 1024, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
    expect(await strict.post(request(s.url))).toMatchObject({ kind: 'refused', error: expect.stringMatching(/^127\.0\.0\.1 is not a public address \(loopback\)/) });
    expect(await strict.post(request('https://auth.example.com/token'))).toEqual({ kind: 'refused', error: 'auth.example.com: 10.1.2.3 is not a public address (private)' });
    expect(await strict.post(request('http://auth.example.com/token'))).toEqual({ kind: 'refused', error: 'must be an https:// URL (the refresh token and client secret travel in the request)' });
    expect(s.seen).toEqual([]);
    await s.close();
  });
});
