import type { ToolResultContent } from '@berth/contracts';
import { z } from 'zod';

/**
 * What the in-sandbox custom tools server sends the sandbox-manager for one call (one JSON line on
 * the sandbox's tools socket). Untrusted: it comes from the sandbox.
 */
export const CustomToolCallRequestSchema = z.strictObject({
  tool_use_id: z.string().min(1).max(256).nullable(),
  name: z.string().min(1).max(256),
  input: z.record(z.string(), z.unknown()),
});
export type CustomToolCallRequest = z.infer<typeof CustomToolCallRequestSchema>;

/** The largest request line the manager reads from a sandbox. */
export const MAX_CUSTOM_TOOL_REQUEST_BYTES = 1024 * 1024;

/** MCP tool-result content (`tools/call` result), as the harness's MCP client takes it. */
export type McpContent =
  | Readonly<{ type: 'text'; text: string }>
  | Readonly<{ type: 'image'; data: string; mimeType: string }>
  | Readonly<{ type: 'resource'; resource: Readonly<{ uri: string; mimeType?: string; text?: string; blob?: string }> }>;

/** The manager's answer line: the client's result, or why there is none (the turn ended). */
export type CustomToolCallAnswer = Readonly<{ content: readonly McpContent[]; isError: boolean }> | Readonly<{ error: string }>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * A `user.custom_tool_result`'s content as MCP content: text stays text, base64 images stay
 * images, base64 and text documents become embedded resources, and what MCP cannot carry (a URL
 * or file reference, a search result) is described in text so the model still sees it.
 */
export function toMcpContent(content: ToolResultContent): McpContent[] {
  return content.map((block): McpContent => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'image': {
        const data = str(block.source['data']);
        const mimeType = str(block.source['media_type']);
        if (block.source['type'] === 'base64' && data !== undefined && mimeType !== undefined) return { type: 'image', data, mimeType };
        return { type: 'text', text: `[image: ${JSON.stringify(block.source)}]` };
      }
      case 'document': {
        const data = str(block.source['data']);
        const uri = `berth://document/${encodeURIComponent(block.title ?? 'document')}`;
        if (block.source['type'] === 'text' && data !== undefined) return { type: 'resource', resource: { uri, mimeType: str(block.source['media_type']) ?? 'text/plain', text: data } };
        if (block.source['type'] === 'base64' && data !== undefined) return { type: 'resource', resource: { uri, mimeType: str(block.source['media_type']) ?? 'application/octet-stream', blob: data } };
        return { type: 'text', text: `[document: ${JSON.stringify(block.source)}]` };
      }
      case 'search_result':
        return { type: 'text', text: [block.title, block.source, ...block.content.map((c) => c.text)].join('\n') };
    }
  });
}
