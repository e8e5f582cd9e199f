import { useState, type FormEvent } from 'react';
import type { Api, EnvironmentInput } from '../api/client';
import { HARNESSES, type Environment, type Harness } from '../api/types';
import { ArchivedToggle, Empty, ErrorBanner, Field, Loading, RowActions, when } from '../components/ui';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

type EnvForm = {
  name: string;
  description: string;
  harness: Harness;
  image: string;
  network: string;
  idle_timeout_seconds: string;
  warm_pool_size: string;
  memory_mb: string;
  cpus: string;
  pids: string;
  apt: string;
  npm: string;
  pip: string;
};

const NETWORK_MODES = ['egress', 'none', 'host'];
const words = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);
/** A number field: blank means "the default" (null); the API says what is out of range. */
const numberOrNull = (text: string): number | null => (text.trim() === '' ? null : Number(text));

function toConfig(f: EnvForm, type: Environment['config']['type']): EnvironmentInput['config'] {
  const sandbox = {
    harness: f.harness,
    // null (not absent) so that clearing a field on edit goes back to its default.
    image: f.image.trim() || null,
    network: f.network || undefined,
    idle_timeout_seconds: numberOrNull(f.idle_timeout_seconds),
    warm_pool_size: numberOrNull(f.warm_pool_size),
    resources: { memory_mb: numberOrNull(f.memory_mb), cpus: numberOrNull(f.cpus), pids: numberOrNull(f.pids) },
  } as unknown as Partial<Environment['config']>;
  if (type !== 'cloud') return { type, ...sandbox };
  return { type, ...sandbox, packages: { apt: words(f.apt), npm: words(f.npm), pip: words(f.pip) } };
}

const packagesOf = (env: Environment): string => {
  const p = env.config.packages;
  const all = p ? [...p.apt.map((n) => `apt:${n}`), ...p.npm.map((n) => `npm:${n}`), ...p.pip.map((n) => `pip:${n}`)] : [];
  return all.length === 0 ? 'no packages' : all.join(' ');
};

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
              <th>Packages</th>
              <th>Idle timeout</th>
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
                <td className="mono" data-testid="env-packages">{packagesOf(env)}</td>
                <td>
                  {env.config.idle_timeout_seconds} s{env.config.warm_pool_size ? ` · ${env.config.warm_pool_size} warm` : ''}
                </td>
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
  const c = env?.config;
  const text = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));
  const [form, setForm] = useState<EnvForm>({
    name: env?.name ?? '',
    description: env?.description ?? '',
    harness: c?.harness ?? 'claude-code',
    image: c?.image ?? '',
    network: c?.network ?? '',
    idle_timeout_seconds: text(c?.idle_timeout_seconds),
    warm_pool_size: text(c?.warm_pool_size),
    memory_mb: text(c?.resources.memory_mb),
    cpus: text(c?.resources.cpus),
    pids: text(c?.resources.pids),
    apt: c?.packages?.apt.join(' ') ?? '',
    npm: c?.packages?.npm.join(' ') ?? '',
    pip: c?.packages?.pip.join(' ') ?? '',
  });
  const saving = useAction();
  const set = (k: keyof EnvForm) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  async function submit(e: FormEvent) {
    e.preventDefault();
    const input = { name: form.name, description: form.description, config: toConfig(form, c?.type ?? 'cloud') };
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
        <Field label="Idle timeout (seconds; blank for 900)">
          <input type="number" min={10} value={form.idle_timeout_seconds} onChange={set('idle_timeout_seconds')} data-testid="env-idle-timeout" />
        </Field>
        <Field label="Warm pool (sandboxes kept started; blank for the server default)">
          <input type="number" min={0} value={form.warm_pool_size} onChange={set('warm_pool_size')} data-testid="env-warm-pool" />
        </Field>
        <Field label="Memory (MiB)">
          <input type="number" min={64} value={form.memory_mb} onChange={set('memory_mb')} data-testid="env-memory" />
        </Field>
        <Field label="CPUs">
          <input type="number" min={0.1} step={0.1} value={form.cpus} onChange={set('cpus')} data-testid="env-cpus" />
        </Field>
        <Field label="Processes">
          <input type="number" min={16} value={form.pids} onChange={set('pids')} />
        </Field>
      </div>
      {(c?.type ?? 'cloud') === 'cloud' && (
        <fieldset className="packages">
          <legend>Packages (installed into the environment's sandbox image, built once)</legend>
          <div className="grid2">
            <Field label="apt">
              <input placeholder="jq ripgrep" value={form.apt} onChange={set('apt')} data-testid="env-apt" />
            </Field>
            <Field label="npm">
              <input placeholder="typescript" value={form.npm} onChange={set('npm')} data-testid="env-npm" />
            </Field>
            <Field label="pip">
              <input placeholder="requests" value={form.pip} onChange={set('pip')} data-testid="env-pip" />
            </Field>
          </div>
        </fieldset>
      )}
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
