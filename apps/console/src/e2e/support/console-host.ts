import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve } from 'node:path';

const CONSOLE_ROOT = resolve(__dirname, '..', '..', '..');
export const DIST = join(CONSOLE_ROOT, 'dist');
const REPO_ROOT = resolve(CONSOLE_ROOT, '..', '..');

/** Builds the console the way `npm run build:console` does (a second or two). */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(CONSOLE_ROOT, 'vite.config.ts'), '--logLevel', 'error'], {
    cwd: REPO_ROOT,
    // Jest sets NODE_ENV=test, which would make Vite bundle React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: 'inherit',
  });
}

/** True when the gateway itself serves the console at /console/. */
export async function gatewayServesConsole(gatewayUrl: string): Promise<boolean> {
  const res = await fetch(`${gatewayUrl}/console/`).catch(() => null);
  return !!res && res.ok && (res.headers.get('content-type') ?? '').includes('text/html');
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json' };

/**
 * Serves the built console at /console/ and passes every other request (the API, the SSE
 * stream) through to the gateway, so the page and the API share one origin as in production.
 * Used only while the gateway does not serve the console itself.
 */
export async function startConsoleHost(gatewayUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(gatewayUrl);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/console' || path.startsWith('/console/')) {
      const rel = normalize(path.replace(/^\/console\/?/, '')).replace(/^(\.\.[/\\])+/, '');
      const file = join(DIST, rel);
      const target = rel && existsSync(file) && !file.endsWith('/') && extname(file) ? file : join(DIST, 'index.html');
      res.writeHead(200, { 'content-type': TYPES[extname(target)] ?? 'application/octet-stream' }).end(readFileSync(target));
      return;
    }
    const proxied = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    proxied.on('error', () => res.destroy());
    res.on('close', () => proxied.destroy());
    req.pipe(proxied);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
