import { useState, type FormEvent } from 'react';
import type { AgentInput, Api } from '../api/client';
import type { Agent } from '../api/types';
import { ArchivedToggle, Empty, ErrorBanner, Field, Loading, RowActions, when } from '../components/ui';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

const modelId = (a: Agent) => (typeof a.model === 'string' ? a.model : a.model.id);

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
  const [form, setForm] = useState<AgentInput>({
    name: agent?.name ?? '',
    model: agent ? modelId(agent) : 'claude-sonnet-4-5',
    system: agent?.system ?? '',
    description: agent?.description ?? '',
  });
  const saving = useAction();
  const set = (k: keyof AgentInput) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  async function submit(e: FormEvent) {
    e.preventDefault();
    await saving.run(async () => {
      if (agent) await api.updateAgent(agent.id, agent.version, form);
      else await api.createAgent(form);
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
