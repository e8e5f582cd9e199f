import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type TestRepository = Readonly<{
  /** Clone URL on this server. */
  url: string;
  /** Commit SHAs by name, as `commits` built them. */
  commits: Readonly<Record<string, string>>;
}>;

/** A commit to make: on `branch` (created from the current one when new), writing `files`. */
export type TestCommit = Readonly<{ name: string; branch: string; files: Readonly<Record<string, string>> }>;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  }).trim();

/**
 * A git smart-HTTP server on loopback (`git http-backend` behind node:http) for clone tests. With a
 * `token`, every request needs HTTP basic auth whose password is that token (any user name, as
 * GitHub's `x-access-token`); without, repositories are public. `requests` records each request's
 * path and whether it was authorized.
 */
export class GitHttpServer {
  private server: Server | null = null;
  private readonly root = mkdtempSync(join(tmpdir(), 'berth-git-'));
  readonly requests: { path: string; authorized: boolean }[] = [];
  url = '';

  constructor(private readonly token: string | null = null) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  /** A bare repository `<name>.git` with these commits (in order); the first branch is the default. */
  repository(name: string, commits: readonly TestCommit[]): TestRepository {
    const work = join(this.root, `${name}-work`);
    mkdirSync(work);
    git(work, 'init', '-q', '-b', commits[0]?.branch ?? 'main');
    const shas: Record<string, string> = {};
    for (const commit of commits) {
      const current = git(work, 'symbolic-ref', '--short', 'HEAD');
      if (current !== commit.branch) git(work, 'checkout', '-q', '-B', commit.branch);
      for (const [path, content] of Object.entries(commit.files)) writeFileSync(join(work, path), content);
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', commit.name);
      shas[commit.name] = git(work, 'rev-parse', 'HEAD');
    }
    git(work, 'checkout', '-q', commits[0]?.branch ?? 'main');
    git(this.root, 'clone', '-q', '--bare', work, `${name}.git`);
    git(join(this.root, `${name}.git`), 'config', 'http.receivepack', 'false');
    return { url: `${this.url}/${name}.git`, commits: shas };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    rmSync(this.root, { recursive: true, force: true });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const authorized = this.token === null || passwordOf(req.headers.authorization) === this.token;
    this.requests.push({ path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="berth-test"' }).end();
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env['PATH'],
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersSent = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      const headers = head.subarray(0, end).toString('utf8').split('\r\n');
      let status = 200;
      for (const line of headers) {
        const [key, ...rest] = line.split(':');
        const value = rest.join(':').trim();
        if (key.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else res.setHeader(key, value);
      }
      res.writeHead(status);
      headersSent = true;
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  }
}

function passwordOf(header: string | undefined): string | null {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.includes(':') ? decoded.slice(decoded.indexOf(':') + 1) : null;
}
