import type { AgentConfig, AgentOutput, HarnessKind, PermissionMode } from '@berth/contracts';
import type { ParseState } from './parse-state';

/** Where the harness reaches its model. The key itself never passes through here: only its name. */
export interface ModelEndpoint {
  /** Server root, e.g. `http://127.0.0.1:8080` (adapters add `/v1` where their API needs it). */
  readonly baseUrl: string;
  /** Name of the secret (an environment variable of the runner) holding the model API key. */
  readonly apiKeyEnv: string;
}

export interface TurnInput {
  /** The user's message, as plain text. */
  readonly prompt: string;
  /**
   * The session's pinned agent version: model id and effort, system prompt (appended to the
   * harness's own, which its tools rely on), tools with their permission policies, MCP servers.
   * The API already refused what this harness cannot honour (`agentConfigIssuesFor`).
   */
  readonly agent: AgentConfig;
  /** The harness's own conversation id to continue, or null for the first turn. */
  readonly resumeId: string | null;
  readonly model: ModelEndpoint;
  /** Working directory of the agent inside the sandbox. */
  readonly cwd: string;
  /** Home directory of the harness user inside the sandbox (config and transcripts live under it). */
  readonly home: string;
}

export interface FileToWrite {
  /** Absolute path inside the sandbox. */
  readonly path: string;
  readonly content: string;
}

/** How to run one turn: everything the runner needs, with no secret values in it. */
export interface TurnPlan {
  readonly argv: readonly string[];
  /** Non-secret environment for the harness process. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Secret environment, by reference: harness variable name → name of the runner's secret whose
   * value to put there (e.g. `{ ANTHROPIC_API_KEY: 'BERTH_MODEL_API_KEY' }`).
   */
  readonly secretEnv: Readonly<Record<string, string>>;
  /** Lines to write to stdin (each without its newline) right after start. */
  readonly stdinLines: readonly string[];
  /**
   * Keep stdin open after `stdinLines` until the turn's terminal line: the harness reads answers
   * to permission prompts and interrupts there. When false, close stdin at once (Codex reads an
   * open stdin as more prompt).
   */
  readonly keepStdinOpen: boolean;
  /** Files to write before starting (provider configuration). */
  readonly files: readonly FileToWrite[];
}

/** The end of a turn, as the harness reported it. */
export interface TurnTerminal {
  readonly ok: boolean;
  readonly interrupted: boolean;
  /** What went wrong when `ok` is false, in the harness's words. */
  readonly error: string | null;
}

/** A tool use that waits for `user.tool_confirmation`; the runner answers it with `answerConfirmation`. */
export interface PendingConfirmation {
  /** The harness's tool use id (`toolu_…`), matching the `tool_use` / `mcp_tool_use` output just emitted. */
  readonly toolUseId: string;
  /** The harness's request id to echo in the answer (as the adapter encodes it). */
  readonly requestId: string;
  readonly input: Readonly<Record<string, unknown>>;
}

export interface ConfirmationDecision {
  readonly result: 'allow' | 'deny';
  readonly denyMessage: string | null;
}

/** What one stdout line meant. */
export interface ParseStep {
  readonly state: ParseState;
  readonly outputs: readonly AgentOutput[];
  /** The harness's conversation id, once the line reveals it (resume with it next turn). */
  readonly harnessSessionId?: string;
  readonly terminal?: TurnTerminal;
  readonly confirmation?: PendingConfirmation;
  /**
   * Lines to write to the harness's stdin now, in answer to this line (a protocol that needs the
   * conversation id before it takes the prompt). Deterministic, so a runner replaying the output
   * after a restart can tell they were written already.
   */
  readonly stdinLines?: readonly string[];
}

/** Where a harness keeps its own transcript, for mirroring into the store and restoring later. */
export interface TranscriptLocation {
  /** Directory to watch. */
  readonly dir: string;
  /** Files in `dir` (or below it when `recursive`) whose names end with this belong to the conversation. */
  readonly nameEndsWith: string;
  readonly recursive: boolean;
}

/** What the harness honours of an agent is `HARNESS_SUPPORT` in `@berth/contracts`; this is how it is driven. */
export interface HarnessCapabilities {
  /** The harness stops a turn on a stdin line; otherwise the runner sends SIGINT. */
  readonly interruptOnStdin: boolean;
  /** How its model API takes the key (the egress puts the real one there): `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI-style). */
  readonly modelKeyHeader: 'x-api-key' | 'bearer';
}

/**
 * One coding-agent CLI, as the sandbox-manager drives it: how to start a turn, how to read its
 * stdout (one JSON line at a time, state threaded through so the runner can persist it and
 * reattach), and where its transcript lives. Pure: no I/O.
 */
export interface HarnessAdapter {
  readonly kind: HarnessKind;
  readonly capabilities: HarnessCapabilities;
  buildTurn(input: TurnInput): TurnPlan;
  /** `prompt`: the turn's user message, for a protocol that sends it in answer to a line (see `ParseStep.stdinLines`). */
  initialState(permissionMode: PermissionMode, prompt?: string): ParseState;
  parseLine(line: string, state: ParseState): ParseStep;
  /** The stdin line that answers a pending confirmation, or null when the harness cannot be asked. */
  answerConfirmation(pending: PendingConfirmation, decision: ConfirmationDecision): string | null;
  /** The stdin line that interrupts the running turn, or null: then send SIGINT. */
  interruptLine(): string | null;
  transcriptLocations(home: string, cwd: string, sessionId: string): readonly TranscriptLocation[];
}
