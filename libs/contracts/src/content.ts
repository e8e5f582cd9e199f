import { z } from 'zod';

/** Message content blocks, as the Managed Agents API carries them (text, image, document). */
export const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string().max(1_000_000) });
export const ImageBlockSchema = z.object({ type: z.literal('image'), source: z.record(z.string(), z.unknown()) });
export const DocumentBlockSchema = z.object({
  type: z.literal('document'),
  source: z.record(z.string(), z.unknown()),
  title: z.string().nullish(),
  context: z.string().nullish(),
});
export const ContentBlockSchema = z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema, DocumentBlockSchema]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;
export const ContentSchema = z.array(ContentBlockSchema).min(1).max(1000);

/** A search result block (the Messages API's `search_result`), passed through as the client sent it. */
export const SearchResultBlockSchema = z.looseObject({ type: z.literal('search_result'), source: z.string().max(10_000), title: z.string().max(10_000), content: z.array(TextBlockSchema).max(1000) });
/** What a `user.custom_tool_result` answers with: the blocks the Messages API takes in a `tool_result`. */
export const ToolResultContentSchema = z.array(z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema, DocumentBlockSchema, SearchResultBlockSchema])).max(1000);
export type ToolResultContent = z.infer<typeof ToolResultContentSchema>;

/** Token usage, cumulative per session (what `session.usage` reports). */
export const UsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative().default(0),
  cache_read_input_tokens: z.number().int().nonnegative().default(0),
});
export type Usage = z.infer<typeof UsageSchema>;

/** The harness that runs a session's turns. */
export const HarnessKindSchema = z.enum(['claude-code', 'codex', 'pi', 'hermes', 'deepseek-harness']);
export type HarnessKind = z.infer<typeof HarnessKindSchema>;

/** When a tool use waits for `user.tool_confirmation`. */
export const PermissionModeSchema = z.enum(['always_allow', 'always_ask']);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;
