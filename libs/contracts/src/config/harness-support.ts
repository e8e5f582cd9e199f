import type { HarnessKind } from '../content';
import { AGENT_TOOL_NAMES, EFFORT_LEVELS, type AgentToolName, type Effort } from './agent-config';

/**
 * What each harness can honour of an agent: the API refuses the rest at session create (see
 * `agentConfigIssuesFor`), and each adapter maps what is here (its unit test checks the two
 * agree). Verified against the real CLIs at the versions in `scripts/harness/versions.env`;
 * Hermes and DeepSeek Harness follow assumed protocols (docs/harnesses.md).
 */
export type HarnessSupport = Readonly<{
  /** Toolset tools the harness offers the model. */
  tools: readonly AgentToolName[];
  /** Tools one harness tool provides together (Codex reads and writes files through its shell): enabled or disabled together. */
  toolGroups: readonly (readonly AgentToolName[])[];
  /** The harness can take built-in tools away from the model. */
  toolsSwitchable: boolean;
  /** `always_ask`: per tool, only for every tool at once, or not at all. */
  confirmation: 'per_tool' | 'all_or_none' | 'none';
  /**
   * MCP servers: any per-tool selection; `restrict_only`: a tool entry can only take away from the
   * server's default (disable a tool, make one ask), not add to it (enable one of a disabled server,
   * exempt one from an asking server); or no MCP at all.
   */
  mcp: 'any' | 'restrict_only' | 'none';
  /** `model.effort` levels the harness has a setting for. */
  effort: readonly Effort[];
  /** `model.speed: fast` has a setting. */
  fastSpeed: boolean;
  /** The harness offers the agent's custom tools (Berth's MCP server or extension in the sandbox forwards each call), or why it cannot. */
  customTools: true | Readonly<{ refused: string }>;
}>;

const SHELL_TOOLS: readonly AgentToolName[] = ['bash', 'read', 'write', 'edit', 'glob', 'grep'];

export const HARNESS_SUPPORT: Readonly<Record<HarnessKind, HarnessSupport>> = {
  'claude-code': {
    tools: AGENT_TOOL_NAMES,
    toolGroups: [],
    toolsSwitchable: true,
    confirmation: 'per_tool',
    mcp: 'restrict_only',
    effort: EFFORT_LEVELS,
    fastSpeed: false,
    customTools: true,
  },
  codex: {
    tools: [...SHELL_TOOLS, 'web_search'],
    toolGroups: [SHELL_TOOLS],
    toolsSwitchable: true,
    // codex app-server with approvalPolicy untrusted: commands it does not know to be safe and file changes ask.
    confirmation: 'all_or_none',
    mcp: 'any',
    effort: EFFORT_LEVELS,
    fastSpeed: true,
    customTools: true,
  },
  pi: {
    tools: SHELL_TOOLS,
    toolGroups: [],
    toolsSwitchable: true,
    // Berth's tool_call extension holds every tool call.
    confirmation: 'all_or_none',
    mcp: 'none',
    effort: ['low', 'medium', 'high', 'xhigh'],
    fastSpeed: false,
    customTools: true,
  },
  hermes: {
    tools: SHELL_TOOLS,
    toolGroups: [],
    toolsSwitchable: false,
    confirmation: 'none',
    mcp: 'none',
    effort: [],
    fastSpeed: false,
    // Hermes Agent's MCP client (stdio `mcp_servers` in config.yaml, a 120 s per-call timeout by default) could run Berth's server.
    customTools: { refused: "Hermes' own MCP client could run Berth's custom tools server, but Berth's hermes adapter follows an assumed protocol that was never run against a real Hermes, so it is not wired" },
  },
  'deepseek-harness': {
    tools: SHELL_TOOLS,
    toolGroups: [],
    toolsSwitchable: false,
    confirmation: 'all_or_none',
    mcp: 'none',
    effort: [],
    fastSpeed: false,
    customTools: { refused: "Berth's deepseek-harness adapter follows an assumed protocol that was never run against a real dsh and knows no MCP client or tool registration of it" },
  },
};
