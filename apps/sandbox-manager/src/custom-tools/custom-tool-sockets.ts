import { stat, unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { listenForSandbox } from '@berth/docker';
import { CUSTOM_TOOLS_SOCKET_FILE, CustomToolCallRequestSchema, MAX_CUSTOM_TOOL_REQUEST_BYTES, toMcpContent, type CustomToolCallAnswer, type CustomToolCallRequest } from '@berth/harness';
import type { Logger } from '@berth/ports';
import { lookUpCustomToolCall, type SessionView } from '@berth/sandbox-workflow';

export type CustomToolSocketsDeps = Readonly<{
  /**
   * The host path of a sandbox's egress socket, under its own host's egress directory (null: it has
   * none). Its directory is the one bind-mounted read-only at /run/berth in the sandbox.
   */
  egressSocketOf: (sandboxId: string) => Promise<string | null>;
  /** The session as this manager knows it, caught up on the journal. */
  view: (sessionId: string) => Promise<SessionView>;
  log: Logger;
  /** How often a waiting call looks at the view again even when nothing woke it (a safety net; answers wake it at once). */
  recheckMs?: number;
}>;

/** At most this many calls wait at once on one sandbox's socket; more are refused (a hostile sandbox cannot pile up connections). */
const MAX_CONNECTIONS = 32;

type Served = Readonly<{ server: Server; sessionId: string; path: string; sockets: Set<Socket> }>;

/**
 * The sandbox-manager's end of custom tools: one unix socket per sandbox that runs a turn whose
 * agent has custom tools, `tools.sock` in the sandbox's own egress directory (the sandbox sees it
 * at /run/berth/tools.sock, read-only mount; no network path from the sandbox to the platform).
 * The socket is bound to its session: a call on it can only ever read that session's results.
 *
 * A call waits until the session's view shows the client's result (`user.custom_tool_result`) and
 * is answered from the view, so a manager restarted while a call waited answers it the same way
 * once the in-sandbox server reconnects and asks again. An interrupt is the harness's to act on
 * (it cancels the call, which closes the connection); a call still waiting when its turn is over
 * is answered with an error.
 */
export class CustomToolSockets {
  private readonly served = new Map<string, Served>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Event ids a connection was handed, per session (for calls matched by name and input). */
  private readonly handedOut = new Map<string, Set<string>>();

  constructor(private readonly deps: CustomToolSocketsDeps) {}

  /** Serves the sandbox's tools socket for the session (idempotent). A sandbox without an egress directory (`network: host`) gets none. */
  async serve(sessionId: string, sandboxId: string): Promise<void> {
    if (this.served.get(sandboxId)?.sessionId === sessionId) return;
    await this.close(sandboxId);
    const egressSocket = await this.deps.egressSocketOf(sandboxId);
    if (egressSocket === null) {
      this.deps.log.warn('the sandbox has no platform directory: its custom tools cannot reach Berth', { session_id: sessionId, sandbox_id: sandboxId });
      return;
    }
    const dir = dirname(egressSocket);
    if (!(await stat(dir)).isDirectory()) throw new Error(`${dir} is not a directory`);
    const path = join(dir, CUSTOM_TOOLS_SOCKET_FILE);
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      this.onConnection(sessionId, socket);
    });
    server.maxConnections = MAX_CONNECTIONS;
    await listenForSandbox(server, path);
    this.served.set(sandboxId, { server, sessionId, path, sockets });
  }

  /** Something about the session changed (a result came, the turn was interrupted or ended): waiting calls look again. */
  changed(sessionId: string): void {
    for (const wake of this.waiters.get(sessionId) ?? []) wake();
  }

  /** Stops serving a sandbox's socket (released); its waiting calls end with it. */
  async close(sandboxId: string): Promise<void> {
    const served = this.served.get(sandboxId);
    if (served === undefined) return;
    this.served.delete(sandboxId);
    for (const socket of served.sockets) socket.destroy();
    await closeServer(served.server);
    await unlink(served.path).catch(() => undefined);
  }

  /** Stops serving every socket of the session. */
  async closeSession(sessionId: string): Promise<void> {
    const sandboxes = [...this.served.entries()].filter(([, s]) => s.sessionId === sessionId).map(([id]) => id);
    await Promise.all(sandboxes.map((id) => this.close(id)));
    this.handedOut.delete(sessionId);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.served.keys()].map((id) => this.close(id)));
  }

  private onConnection(sessionId: string, socket: Socket): void {
    let buffer = '';
    let done = false;
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      if (done) return;
      buffer += chunk;
      if (buffer.length > MAX_CUSTOM_TOOL_REQUEST_BYTES) {
        done = true;
        return void answer(socket, { error: 'the custom tool call is too large' });
      }
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      done = true;
      const parsed = parseRequest(buffer.slice(0, end));
      if (parsed === null) return void answer(socket, { error: 'not a custom tool call' });
      void this.waitForResult(sessionId, parsed, socket).catch((error: unknown) => {
        this.deps.log.warn('custom tool call not answered', { session_id: sessionId, err: error });
        socket.destroy();
      });
    });
  }

  private async waitForResult(sessionId: string, request: CustomToolCallRequest, socket: Socket): Promise<void> {
    const gone = new Promise<'gone'>((resolve) => socket.once('close', () => resolve('gone')));
    for (;;) {
      // Listening before reading: a change between the read and the wait still wakes it.
      const change = this.nextChange(sessionId);
      try {
        const handed = this.handedOut.get(sessionId) ?? new Set<string>();
        const found = lookUpCustomToolCall(await this.deps.view(sessionId), request, handed);
        if (found.kind === 'answer') {
          this.handedOut.set(sessionId, handed.add(found.event_id));
          return answer(socket, { content: toMcpContent(found.content), isError: found.is_error });
        }
        if (found.kind === 'ended') return answer(socket, { error: found.message });
        if ((await Promise.race([change.next, gone])) === 'gone') return;
      } finally {
        change.cancel();
      }
    }
  }

  /** The next change of the session (or the periodic recheck), and how to stop listening for it. */
  private nextChange(sessionId: string): Readonly<{ next: Promise<'changed'>; cancel: () => void }> {
    let waiters = this.waiters.get(sessionId);
    if (waiters === undefined) this.waiters.set(sessionId, (waiters = new Set()));
    const set = waiters;
    let wake: () => void = () => undefined;
    const next = new Promise<'changed'>((resolve) => (wake = () => resolve('changed')));
    const timer = setTimeout(wake, this.deps.recheckMs ?? 2_000);
    timer.unref();
    set.add(wake);
    return {
      next,
      cancel: () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(sessionId) === set) this.waiters.delete(sessionId);
      },
    };
  }
}

function parseRequest(line: string): CustomToolCallRequest | null {
  try {
    const parsed = CustomToolCallRequestSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function answer(socket: Socket, body: CustomToolCallAnswer): void {
  socket.end(`${JSON.stringify(body)}\n`);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
  });
}
