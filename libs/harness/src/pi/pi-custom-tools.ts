import type { AgentConfig } from '@berth/contracts';
import { CUSTOM_TOOLS_SOCKET, customToolsDir, customToolsFiles, customToolsOf } from '../custom-tools/custom-tools-server';
import type { FileToWrite } from '../harness-adapter.port';

/**
 * Pi names each custom tool `berth__<name>` (the model sees that name): its stdout then tells a
 * custom tool call from a built-in one, and a custom tool named like a Pi tool (`bash`) cannot
 * shadow it.
 */
export const PI_CUSTOM_TOOL_PREFIX = 'berth__';

/** The extension, the files it reads, and the names to allow in `--tools`. */
export type PiCustomTools = Readonly<{ files: FileToWrite[]; extension: string; toolNames: string[] }>;

export function piCustomTools(agent: AgentConfig, home: string): PiCustomTools | null {
  const tools = customToolsOf(agent);
  if (tools.length === 0) return null;
  const dir = customToolsDir(home);
  const extension = `${dir}/pi-extension.ts`;
  return {
    files: [...customToolsFiles(agent, home), { path: extension, content: piCustomToolsExtension(dir) }],
    extension,
    toolNames: tools.map((t) => `${PI_CUSTOM_TOOL_PREFIX}${t.name}`),
  };
}

/**
 * Pi has no MCP client, but an extension can register tools (`pi.registerTool`, verified with pi
 * 0.73.1; a plain JSON Schema is accepted as `parameters`). Each of the agent's custom tools is
 * one whose `execute` asks the sandbox-manager with the shared socket client, naming the call by
 * Pi's tool call id (the model's, which Pi also prints), and waits: Pi has no tool timeout. An
 * abort (interrupt) stops asking and fails the call. An error answer, or a result the client
 * marked `is_error`, is thrown: Pi marks a tool result as an error only when `execute` throws.
 */
function piCustomToolsExtension(dir: string): string {
  return `// Written by Berth before every turn of an agent with custom tools (see libs/harness/src/pi/pi-custom-tools.ts).
import { readFileSync } from 'node:fs';
import { askPlatform } from ${JSON.stringify(`${dir}/client.mjs`)};

const SOCKET = ${JSON.stringify(CUSTOM_TOOLS_SOCKET)};
const tools = JSON.parse(readFileSync(${JSON.stringify(`${dir}/tools.json`)}, 'utf8'));

/** MCP content as Pi tool content: text and images as they are, a resource as its text. */
const toPi = (block: any) =>
  block?.type === 'image' ? { type: 'image', data: block.data, mimeType: block.mimeType } : { type: 'text', text: block?.type === 'text' ? block.text : (block?.resource?.text ?? JSON.stringify(block?.resource ?? block)) };

function ask(request: any, signal: AbortSignal | undefined): Promise<any> {
  const call = askPlatform(SOCKET, request);
  return new Promise((resolve, reject) => {
    const abort = () => {
      call.cancel();
      reject(new Error('the custom tool call was interrupted'));
    };
    if (signal?.aborted) return abort();
    signal?.addEventListener('abort', abort, { once: true });
    call.answer.then((answer: any) => {
      signal?.removeEventListener('abort', abort);
      resolve(answer);
    });
  });
}

export default function (pi: any) {
  for (const tool of tools) {
    pi.registerTool({
      name: ${JSON.stringify(PI_CUSTOM_TOOL_PREFIX)} + tool.name,
      label: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      async execute(toolCallId: string, params: any, signal: AbortSignal | undefined) {
        const answer = await ask({ tool_use_id: toolCallId, name: tool.name, input: params ?? {} }, signal);
        if (typeof answer.error === 'string') throw new Error(answer.error);
        const content = (Array.isArray(answer.content) ? answer.content : []).map(toPi);
        if (answer.isError === true) throw new Error(content.map((c: any) => c.text ?? '[image]').join('\\n'));
        return { content, details: {} };
      },
    });
  }
}
`;
}
