import { useState, type FormEvent } from 'react';
import type { AgentInput, Api } from '../api/client';
import { AGENT_TOOLS, type Agent } from '../api/types';
import { ArchivedToggle, Empty, ErrorBanner, Field, Loading, RowActions, when } from '../components/ui';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';
import { EMPTY_INPUT_SCHEMA, parseInputSchema, toolsFormOf, toolsOfForm, toolsSummary, type CustomChoice, type McpChoice, type ToolsForm } from './agent-tools';

const modelId = (a: Agent) => a.model.id;

export function AgentsPage({ api }: { api: Api }) {
  const [includeArchived, setIncludeArchived] = useState(false);
  const agents = useLoad(() => api.listAgents(includeArchived), [api, includeArchived]);
  const [editing, setEditing] = useState<Agent | 'new' | null>(null);
  const archiving = useAction();

  async function archive(agent: Agent) {
    if (!window.confirm(`Archive agent "${agent.name}"? Archived agents are read-only.`)) return;
    await archiving.run(async () => {
      await api.archiveAgent(agent.id);
      agents.reload();
    });
  }

  return (
    <section>
      <div className="page-head">
        <h2>Agents</h2>
        <ArchivedToggle checked={includeArchived} onChange={setIncludeArchived} />
        <button type="button" className="primary" onClick={() => setEditing('new')} data-testid="agent-new">
          New agent
        </button>
      </div>
      {editing && (
        <AgentForm
          api={api}
          agent={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            agents.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorBanner error={archiving.error} />
      <ErrorBanner error={agents.error} onRetry={agents.reload} />
      {agents.loading && !agents.data && <Loading what="agents" />}
      {agents.data && agents.data.data.length === 0 && <Empty>No agents yet. An agent names a model and its instructions; create one to start sessions.</Empty>}
      {agents.data && agents.data.data.length > 0 && (
        <table data-testid="agents-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Model</th>
              <th>Tools</th>
              <th>Version</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {agents.data.data.map((a) => (
              <tr key={a.id} data-testid="agent-row" className={a.archived_at ? 'archived' : ''}>
                <td>
                  <strong>{a.name}</strong>
                  <div className="muted mono">{a.id}</div>
                </td>
                <td className="mono">{modelId(a)}</td>
                <td data-testid="agent-tools">{toolsSummary(a)}</td>
                <td>v{a.version}</td>
                <td>{when(a.updated_at)}</td>
                <td className="actions">
                  <RowActions archived={Boolean(a.archived_at)} testId="agent" onEdit={() => setEditing(a)} onArchive={() => archive(a)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function AgentForm({ api, agent, onDone, onCancel }: { api: Api; agent: Agent | null; onDone: () => void; onCancel: () => void }) {
  const [form, setForm] = useState<Omit<AgentInput, 'tools' | 'mcp_servers'>>({
    name: agent?.name ?? '',
    model: agent ? modelId(agent) : 'claude-sonnet-4-5',
    system: agent?.system ?? '',
    description: agent?.description ?? '',
  });
  const [tools, setTools] = useState<ToolsForm>(() => toolsFormOf(agent));
  const saving = useAction();
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  async function submit(e: FormEvent) {
    e.preventDefault();
    await saving.run(async () => {
      const input: AgentInput = { ...form, ...toolsOfForm(tools) };
      if (agent) await api.updateAgent(agent.id, agent.version, input);
      else await api.createAgent(input);
      onDone();
    });
  }

  return (
    <form className="card form" onSubmit={submit} data-testid="agent-form">
      <h3>{agent ? `Edit ${agent.name} (new version after v${agent.version})` : 'New agent'}</h3>
      <div className="grid2">
        <Field label="Name">
          <input required value={form.name} onChange={set('name')} data-testid="agent-name" />
        </Field>
        <Field label="Model">
          <input required value={form.model} onChange={set('model')} data-testid="agent-model" />
        </Field>
      </div>
      <Field label="Description">
        <input value={form.description} onChange={set('description')} />
      </Field>
      <Field label="System prompt">
        <textarea rows={4} value={form.system} onChange={set('system')} data-testid="agent-system" />
      </Field>
      <ToolsEditor tools={tools} onChange={setTools} />
      <CustomToolsEditor tools={tools} onChange={setTools} />
      <ErrorBanner error={saving.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={saving.busy} data-testid="agent-save">
          {saving.busy ? 'Saving…' : agent ? 'Save new version' : 'Create agent'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The built-in toolset (each tool on or off, asking or not) and the MCP servers the agent may use. */
function ToolsEditor({ tools, onChange }: { tools: ToolsForm; onChange: (tools: ToolsForm) => void }) {
  const setTool = (name: (typeof AGENT_TOOLS)[number], change: Partial<ToolsForm['builtin'][typeof name]>) =>
    onChange({ ...tools, builtin: { ...tools.builtin, [name]: { ...tools.builtin[name], ...change } } });
  const setServer = (i: number, change: Partial<McpChoice>) => onChange({ ...tools, mcp: tools.mcp.map((s, j) => (j === i ? { ...s, ...change } : s)) });
  return (
    <fieldset className="tools" data-testid="agent-tools-editor">
      <legend>Tools</legend>
      <label className="inline">
        <input type="checkbox" checked={tools.toolset} onChange={(e) => onChange({ ...tools, toolset: e.target.checked })} data-testid="agent-toolset" /> Built-in tools
      </label>
      {tools.toolset && (
        <table className="compact">
          <thead>
            <tr>
              <th>Tool</th>
              <th>Offered</th>
              <th>Permission</th>
            </tr>
          </thead>
          <tbody>
            {AGENT_TOOLS.map((name) => (
              <tr key={name}>
                <td className="mono">{name}</td>
                <td>
                  <input type="checkbox" checked={tools.builtin[name].enabled} onChange={(e) => setTool(name, { enabled: e.target.checked })} data-testid={`tool-enabled-${name}`} />
                </td>
                <td>
                  <select value={tools.builtin[name].ask ? 'ask' : 'allow'} onChange={(e) => setTool(name, { ask: e.target.value === 'ask' })} data-testid={`tool-permission-${name}`}>
                    <option value="allow">always allow</option>
                    <option value="ask">ask before each use</option>
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4>MCP servers</h4>
      {tools.mcp.length === 0 && <p className="muted">None. An MCP server (streamable HTTP) adds its tools to the agent.</p>}
      {tools.mcp.map((server, i) => (
        <div className="row" key={i} data-testid="mcp-server">
          <input placeholder="name" value={server.name} onChange={(e) => setServer(i, { name: e.target.value })} data-testid="mcp-name" />
          <input placeholder="https://…/mcp" value={server.url} onChange={(e) => setServer(i, { url: e.target.value })} data-testid="mcp-url" />
          <label className="inline">
            <input type="checkbox" checked={server.ask} onChange={(e) => setServer(i, { ask: e.target.checked })} data-testid="mcp-ask" /> ask before each call
          </label>
          <button type="button" className="link" onClick={() => onChange({ ...tools, mcp: tools.mcp.filter((_, j) => j !== i) })}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange({ ...tools, mcp: [...tools.mcp, { name: '', url: '', ask: false, enabled: true, configs: [] }] })} data-testid="mcp-add">
        Add MCP server
      </button>
    </fieldset>
  );
}

/** The agent's custom tools: the model calls them, the client runs them and answers with `user.custom_tool_result`. */
function CustomToolsEditor({ tools, onChange }: { tools: ToolsForm; onChange: (tools: ToolsForm) => void }) {
  const setTool = (i: number, change: Partial<CustomChoice>) => onChange({ ...tools, custom: tools.custom.map((t, j) => (j === i ? { ...t, ...change } : t)) });
  return (
    <fieldset className="tools" data-testid="custom-tools-editor">
      <legend>Custom tools</legend>
      {tools.custom.length === 0 && <p className="muted">None. A custom tool is one your client runs: the session waits for its result (user.custom_tool_result).</p>}
      {tools.custom.map((tool, i) => {
        const parsed = parseInputSchema(tool.schema);
        return (
          <div className="card" key={i} data-testid="custom-tool">
            <div className="grid2">
              <Field label="Name">
                <input required placeholder="lookup_order" value={tool.name} onChange={(e) => setTool(i, { name: e.target.value })} data-testid="custom-tool-name" />
              </Field>
              <Field label="Description">
                <input value={tool.description} onChange={(e) => setTool(i, { description: e.target.value })} data-testid="custom-tool-description" />
              </Field>
            </div>
            <Field label="Input schema (JSON Schema)">
              <textarea rows={5} className="mono" value={tool.schema} onChange={(e) => setTool(i, { schema: e.target.value })} data-testid="custom-tool-schema" />
            </Field>
            {'error' in parsed && (
              <p className="field-error" role="alert" data-testid="custom-tool-schema-error">
                {parsed.error}
              </p>
            )}
            <button type="button" className="link" onClick={() => onChange({ ...tools, custom: tools.custom.filter((_, j) => j !== i) })} data-testid="custom-tool-remove">
              Remove
            </button>
          </div>
        );
      })}
      <button type="button" onClick={() => onChange({ ...tools, custom: [...tools.custom, { name: '', description: '', schema: EMPTY_INPUT_SCHEMA }] })} data-testid="custom-tool-add">
        Add custom tool
      </button>
    </fieldset>
  );
}
