import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

/** One request a test registry answered (or could not), in order. */
export type RegistryRequest = Readonly<{ method: string; path: string; status: number }>;

/**
 * Serves a directory on 127.0.0.1 (GET and HEAD; a directory's `index.json`; 404 for what is not
 * there, nothing outside the directory): a package registry or repository made by a test, reached through
 * `ScriptedUpstreamProxy` under a public-looking name.
 */
export class StaticFileServer {
  readonly requests: RegistryRequest[] = [];
  private readonly server: Server;

  constructor(private readonly root: string) {
    this.server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const file = normalize(join(this.root, path));
      const answer = (status: number, body: Buffer | string, type = 'text/plain') => {
        this.requests.push({ method: req.method ?? 'GET', path, status });
        res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(req.method === 'HEAD' ? undefined : body);
      };
      if (!(file === this.root || file.startsWith(`${this.root}/`)) || (req.method !== 'GET' && req.method !== 'HEAD')) return answer(404, 'not found\n');
      // A directory answers with its index.json (an npm packument beside the package's tarballs).
      readFile(file)
        .catch(() => readFile(join(file, 'index.json')))
        .then(
          (data) => answer(200, data, /\.(tgz|deb|gpg)$/.test(file) ? 'application/octet-stream' : 'application/json'),
          () => answer(404, 'not found\n'),
        );
    });
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
