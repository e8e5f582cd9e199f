import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** One tool call the server answered, as a test sees it. */
export interface McpToolCall {
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly at: Date;
}

export interface TestMcpServerOptions {
  /** Address to listen on: loopback by default; a sandbox on another network needs an address it can reach. */
  readonly host?: string;
  /** The server's name in its `initialize` answer. */
  readonly name?: string;
  /**
   * Answer only requests carrying `Authorization: Bearer <token>`, everything else 401 (as a server
   * behind a vault credential); a function gives the token valid now (an OAuth server's current one).
   */
  readonly bearerToken?: string | (() => string);
  /** Serve HTTPS with this key and certificate (e.g. from `TestCertificates`) instead of plain HTTP. */
  readonly tls?: Readonly<{ keyPem: string; certPem: string }>;
  /** Answer `initialize` this late (a slow server, or one far away through a busy egress). */
  readonly initializeDelayMs?: number;
}

/** The text every `lookup` call answers, so a test can find it in the model request and the events. */
export const lookupAnswer = (key: string): string => `the value of ${key} is 42`;

/**
 * A small MCP server over streamable HTTP (stateless: one server and transport per request), with
 * two tools: `lookup {key}` answers `lookupAnswer(key)`, `shout {text}` answers it in capitals.
 * Records every tool call and every JSON-RPC method it received.
 */
export class TestMcpServer {
  private readonly server: Server;
  private readonly recordedCalls: McpToolCall[] = [];
  private readonly recordedMethods: string[] = [];
  private readonly recordedAuthorizations: (string | null)[] = [];

  constructor(private readonly options: TestMcpServerOptions = {}) {
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.receive(req, res);
    this.server = options.tls === undefined ? createServer(handler) : createHttpsServer({ key: options.tls.keyPem, cert: options.tls.certPem }, handler);
  }

  /** Tool calls answered, oldest first. */
  get calls(): readonly McpToolCall[] {
    return this.recordedCalls;
  }

  /** JSON-RPC methods received (`initialize`, `tools/list`, `tools/call`, …), oldest first. */
  get methods(): readonly string[] {
    return this.recordedMethods;
  }

  /** The `Authorization` header of every request to the endpoint (null when absent), oldest first. */
  get authorizations(): readonly (string | null)[] {
    return this.recordedAuthorizations;
  }

  /** The streamable-HTTP endpoint, e.g. `http://127.0.0.1:41234/mcp` (`https://` with `tls`). */
  get url(): string {
    const address = this.server.address() as AddressInfo | null;
    if (address === null) throw new Error('MCP server is not listening; call start() first');
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `${this.options.tls === undefined ? 'http' : 'https'}://${host}:${address.port}/mcp`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private mcpServer(): McpServer {
    const server = new McpServer({ name: this.options.name ?? 'berth-test-mcp', version: '1.0.0' });
    server.registerTool(
      'lookup',
      { description: 'Looks up the value stored under a key.', inputSchema: { key: z.string() } },
      async ({ key }) => {
        this.recordedCalls.push({ tool: 'lookup', arguments: { key }, at: new Date() });
        return { content: [{ type: 'text', text: lookupAnswer(key) }] };
      },
    );
    server.registerTool(
      'shout',
      { description: 'Repeats a text in capital letters.', inputSchema: { text: z.string() } },
      async ({ text }) => {
        this.recordedCalls.push({ tool: 'shout', arguments: { text }, at: new Date() });
        return { content: [{ type: 'text', text: text.toUpperCase() }] };
      },
    );
    return server;
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://mcp').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    this.recordedAuthorizations.push(req.headers.authorization ?? null);
    const bearer = typeof this.options.bearerToken === 'function' ? this.options.bearerToken() : this.options.bearerToken;
    if (bearer !== undefined && req.headers.authorization !== `Bearer ${bearer}`) {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    if (req.method !== 'POST') {
      // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
      return;
    }
    const methods = (Array.isArray(body) ? body : [body]).map((message) => (message as { method?: unknown } | null)?.method).filter((m): m is string => typeof m === 'string');
    this.recordedMethods.push(...methods);
    if (methods.includes('initialize') && this.options.initializeDelayMs !== undefined) await new Promise((r) => setTimeout(r, this.options.initializeDelayMs));
    const server = this.mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
