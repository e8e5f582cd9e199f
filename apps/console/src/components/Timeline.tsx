import { useState } from 'react';
import type { Block, ToolBlock } from '../events/fold';

export type ToolDecision = (toolUseId: string, result: 'allow' | 'deny', denyMessage?: string) => void;
/** Sends a custom tool call's result (`user.custom_tool_result`). */
export type ToolResultAnswer = (customToolUseId: string, text: string, isError: boolean) => void;
/** Forks the session from the end of the turn this `user.message` started. */
export type ForkFrom = (messageEventId: string) => void;

export function Timeline({ blocks, onDecide, onResult, forkable = [], onFork }: { blocks: Block[]; onDecide: ToolDecision; onResult: ToolResultAnswer; forkable?: readonly string[]; onFork?: ForkFrom }) {
  return (
    <ol className="timeline" data-testid="timeline">
      {blocks.map((block) => (
        <li key={block.id} className={`block block-${block.kind}`} data-testid={`block-${block.kind}`}>
          <BlockView block={block} onDecide={onDecide} onResult={onResult} onFork={onFork !== undefined && forkable.includes(block.id) ? onFork : undefined} />
        </li>
      ))}
    </ol>
  );
}

function BlockView({ block, onDecide, onResult, onFork }: { block: Block; onDecide: ToolDecision; onResult: ToolResultAnswer; onFork?: ForkFrom }) {
  switch (block.kind) {
    case 'user_message':
      return (
        <>
          <div className="who">
            You
            {onFork && (
              <button type="button" className="link fork" onClick={() => onFork(block.id)} data-testid="fork-from-turn" title="A new session with this conversation and the workspace as this turn left them">
                Fork from this turn
              </button>
            )}
          </div>
          <div className="text">{block.text}</div>
        </>
      );
    case 'agent_message':
      return (
        <>
          <div className="who">Agent</div>
          <div className="text">{block.text}</div>
        </>
      );
    case 'thinking':
      return <div className="muted">Thinking…</div>;
    case 'tool':
      return <ToolView tool={block} onDecide={onDecide} onResult={onResult} />;
    case 'status':
      return (
        <div className={`status-line tone-${block.tone}`}>
          {block.label}
          {block.detail && <span className="muted"> · {block.detail}</span>}
        </div>
      );
    case 'error':
      return (
        <div className="error-line">
          <strong>Error</strong> <code>{block.errorType}</code> {block.message}
          {block.retryStatus && <span className="muted"> ({block.retryStatus})</span>}
        </div>
      );
    case 'notice':
      return (
        <div className="notice-line">
          {block.label}
          {block.detail && <span className="muted"> · {block.detail}</span>}
        </div>
      );
  }
}

function ToolView({ tool, onDecide, onResult }: { tool: ToolBlock; onDecide: ToolDecision; onResult: ToolResultAnswer }) {
  const [denyMessage, setDenyMessage] = useState('');
  const [resultText, setResultText] = useState('');
  const waiting = tool.custom ? 'needs result' : 'needs approval';
  const state = tool.result ? (tool.result.isError ? 'failed' : 'done') : tool.confirmation?.result === 'deny' ? 'denied' : tool.awaitingConfirmation ? waiting : 'running';
  return (
    <div className={`tool tool-${state.replace(' ', '-')}`} data-testid="tool-block" data-tool-state={state}>
      <div className="tool-head">
        <span className="tool-name mono" data-testid="tool-name">
          {tool.name}
        </span>
        <span className="tool-state">{state}</span>
        {tool.confirmation && (
          <span className="muted">
            {tool.confirmation.result === 'allow' ? 'approved' : `denied${tool.confirmation.denyMessage ? `: ${tool.confirmation.denyMessage}` : ''}`}
          </span>
        )}
      </div>
      <pre className="tool-input" data-testid="tool-input">
        {formatInput(tool.input)}
      </pre>
      {tool.result && (
        <pre className={tool.result.isError ? 'tool-result is-error' : 'tool-result'} data-testid="tool-result">
          {tool.result.text || '(no output)'}
        </pre>
      )}
      {tool.awaitingConfirmation && tool.custom && (
        <div className="row confirm" data-testid="tool-result-form">
          <textarea placeholder="The tool's result" value={resultText} onChange={(e) => setResultText(e.target.value)} data-testid="tool-result-text" />
          <button type="button" className="primary" onClick={() => onResult(tool.id, resultText, false)} data-testid="tool-result-send">
            Send result
          </button>
          <button type="button" className="danger" onClick={() => onResult(tool.id, resultText, true)} data-testid="tool-result-error">
            Send as error
          </button>
        </div>
      )}
      {tool.awaitingConfirmation && !tool.custom && (
        <div className="row confirm" data-testid="tool-confirm">
          <button type="button" className="primary" onClick={() => onDecide(tool.id, 'allow')} data-testid="tool-allow">
            Approve
          </button>
          <input placeholder="Reason (optional)" value={denyMessage} onChange={(e) => setDenyMessage(e.target.value)} data-testid="tool-deny-message" />
          <button type="button" className="danger" onClick={() => onDecide(tool.id, 'deny', denyMessage || undefined)} data-testid="tool-deny">
            Deny
          </button>
        </div>
      )}
    </div>
  );
}

/** Shows the common single-field inputs (a command, a path) plainly, anything else as JSON. */
function formatInput(input: unknown): string {
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const entries = Object.entries(input as Record<string, unknown>);
    if (entries.length === 1 && typeof entries[0][1] === 'string') return `${entries[0][0]}: ${entries[0][1]}`;
  }
  return JSON.stringify(input, null, 2);
}
