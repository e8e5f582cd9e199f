/**
 * The in-sandbox half of a custom tool call that every harness shares (Berth's MCP server for
 * Claude Code and Codex, Berth's extension for Pi): a dependency-free ES module that asks the
 * sandbox-manager over the unix socket for one call's answer, one JSON line
 * `{ tool_use_id, name, input }` out, one JSON line back (`{ content, isError }` or `{ error }`).
 * The call waits as long as the client takes to answer. When the connection breaks before the
 * answer (the manager restarted, or is not listening yet) it connects again and asks again with
 * the same request: the manager answers from the session's journal, so an answer given while the
 * connection was down is not lost. `cancel()` stops asking (the answer then never comes).
 */
export const CUSTOM_TOOLS_CLIENT_JS = `// Written by Berth into every sandbox whose agent has custom tools (see libs/harness/src/custom-tools).
import { connect } from 'node:net';

const RETRY_MS = 500;

export function askPlatform(socketPath, request) {
  let cancelled = false;
  let socket = null;
  let timer = null;
  const answer = new Promise((resolve) => {
    const attempt = () => {
      if (cancelled) return;
      let buffer = '';
      let answered = false;
      socket = connect(socketPath);
      socket.setEncoding('utf8');
      socket.on('connect', () => socket.write(JSON.stringify(request) + '\\n'));
      socket.on('data', (chunk) => {
        buffer += chunk;
        const end = buffer.indexOf('\\n');
        if (end < 0 || answered) return;
        answered = true;
        socket.end();
        try {
          resolve(JSON.parse(buffer.slice(0, end)));
        } catch {
          resolve({ error: 'the platform sent an unreadable answer' });
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        if (answered || cancelled) return;
        timer = setTimeout(attempt, RETRY_MS);
      });
    };
    attempt();
  });
  const cancel = () => {
    cancelled = true;
    if (timer !== null) clearTimeout(timer);
    socket?.destroy();
  };
  return { answer, cancel };
}
`;
