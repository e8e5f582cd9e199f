import { useState, type FormEvent } from 'react';
import type { Api } from '../api/client';
import { HARNESSES, type Environment, type EnvironmentConfig, type Harness, type PermissionMode } from '../api/types';
import { ArchivedToggle, Empty, ErrorBanner, Field, Loading, RowActions, when } from '../components/ui';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

type EnvForm = { name: string; description: string; harness: Harness; image: string; network: string; permission_mode: PermissionMode; idle_timeout_seconds: string };

const NETWORK_MODES = ['egress', 'none', 'host'];

function toConfig(f: EnvForm, base: EnvironmentConfig): EnvironmentConfig {
  const config: EnvironmentConfig = { ...base, type: base.type ?? 'cloud', harness: f.harness, permission_mode: f.permission_mode };
  // null (not absent) so that clearing the field on edit goes back to the harness default.
  config.image = f.image.trim() || null;
  if (f.network) config.network = f.network;
  else delete config.network;
  if (f.idle_timeout_seconds.trim()) config.idle_timeout_seconds = Number(f.idle_timeout_seconds);
  else delete config.idle_timeout_seconds;
  return config;
}

export function EnvironmentsPage({ api }: { api: Api }) {
  const [includeArchived, setIncludeArchived] = useState(false);
  const envs = useLoad(() => api.listEnvironments(includeArchived), [api, includeArchived]);
  const [editing, setEditing] = useState<Environment | 'new' | null>(null);
  const archiving = useAction();

  async function archive(env: Environment) {
    if (!window.confirm(`Archive environment "${env.name}"? New sessions can no longer use it.`)) return;
    await archiving.run(async () => {
      await api.archiveEnvironment(env.id);
      envs.reload();
    });
  }

  return (
    <section>
      <div className="page-head">
        <h2>Environments</h2>
        <ArchivedToggle checked={includeArchived} onChange={setIncludeArchived} />
        <button type="button" className="primary" onClick={() => setEditing('new')} data-testid="env-new">
          New environment
        </button>
      </div>
      {editing && (
        <EnvironmentForm
          api={api}
          env={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            envs.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorBanner error={archiving.error} />
      <ErrorBanner error={envs.error} onRetry={envs.reload} />
      {envs.loading && !envs.data && <Loading what="environments" />}
      {envs.data && envs.data.data.length === 0 && <Empty>No environments yet. An environment picks the harness and the sandbox a session runs in.</Empty>}
      {envs.data && envs.data.data.length > 0 && (
        <table data-testid="envs-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Harness</th>
              <th>Sandbox</th>
              <th>Tools</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {envs.data.data.map((env) => (
              <tr key={env.id} data-testid="env-row" className={env.archived_at ? 'archived' : ''}>
                <td>
                  <strong>{env.name}</strong>
                  <div className="muted mono">{env.id}</div>
                </td>
                <td className="mono">{env.config.harness ?? '—'}</td>
                <td className="mono">
                  {env.config.image ?? 'default image'} · {env.config.network ?? 'default network'}
                </td>
                <td>{env.config.permission_mode === 'always_ask' ? 'ask first' : 'always allow'}</td>
                <td>{when(env.updated_at)}</td>
                <td className="actions">
                  <RowActions archived={Boolean(env.archived_at)} testId="env" onEdit={() => setEditing(env)} onArchive={() => archive(env)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function EnvironmentForm({ api, env, onDone, onCancel }: { api: Api; env: Environment | null; onDone: () => void; onCancel: () => void }) {
  const c = env?.config ?? {};
  const [form, setForm] = useState<EnvForm>({
    name: env?.name ?? '',
    description: env?.description ?? '',
    harness: c.harness ?? 'claude-code',
    image: c.image ?? '',
    network: c.network ?? '',
    permission_mode: c.permission_mode ?? 'always_allow',
    idle_timeout_seconds: c.idle_timeout_seconds === undefined ? '' : String(c.idle_timeout_seconds),
  });
  const saving = useAction();
  const set = (k: keyof EnvForm) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  async function submit(e: FormEvent) {
    e.preventDefault();
    const input = { name: form.name, description: form.description, config: toConfig(form, c) };
    await saving.run(async () => {
      if (env) await api.updateEnvironment(env.id, input);
      else await api.createEnvironment(input);
      onDone();
    });
  }

  return (
    <form className="card form" onSubmit={submit} data-testid="env-form">
      <h3>{env ? `Edit ${env.name}` : 'New environment'}</h3>
      <div className="grid2">
        <Field label="Name">
          <input required value={form.name} onChange={set('name')} data-testid="env-name" />
        </Field>
        <Field label="Harness">
          <select value={form.harness} onChange={set('harness')} data-testid="env-harness">
            {HARNESSES.map((h) => (
              <option key={h}>{h}</option>
            ))}
          </select>
        </Field>
        <Field label="Image (blank for the harness default)">
          <input value={form.image} onChange={set('image')} data-testid="env-image" />
        </Field>
        <Field label="Network">
          <select value={form.network} onChange={set('network')} data-testid="env-network">
            <option value="">default</option>
            {NETWORK_MODES.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </Field>
        <Field label="Tool permissions">
          <select value={form.permission_mode} onChange={set('permission_mode')} data-testid="env-permission">
            <option value="always_allow">always allow</option>
            <option value="always_ask">ask before each tool use</option>
          </select>
        </Field>
        <Field label="Idle timeout (seconds)">
          <input type="number" min={1} value={form.idle_timeout_seconds} onChange={set('idle_timeout_seconds')} />
        </Field>
      </div>
      <Field label="Description">
        <input value={form.description} onChange={set('description')} />
      </Field>
      <ErrorBanner error={saving.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={saving.busy} data-testid="env-save">
          {saving.busy ? 'Saving…' : env ? 'Save' : 'Create environment'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
