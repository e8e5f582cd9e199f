import { useState, type FormEvent } from 'react';
import type { Api, ResourceInput, SessionFilters } from '../api/client';
import { SESSION_STATUSES, type Agent, type Environment, type SessionStatus } from '../api/types';
import { Empty, ErrorBanner, Field, Loading, StatusBadge, when } from '../components/ui';
import { hrefFor, navigate } from '../router';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

export function SessionsPage({ api }: { api: Api }) {
  const [filters, setFilters] = useState<SessionFilters>({ status: '', agentId: '', includeArchived: false });
  const sessions = useLoad(() => api.listSessions(filters), [api, filters]);
  const agents = useLoad(() => api.listAgents(), [api]);
  const [creating, setCreating] = useState(false);
  const importing = useAction();
  const agentName = (id: string) => agents.data?.data.find((a) => a.id === id)?.name ?? id;

  return (
    <section>
      <div className="page-head">
        <h2>Sessions</h2>
        <button type="button" className="primary" onClick={() => setCreating(true)} data-testid="session-new">
          New session
        </button>
        <label className="button" title="Recreate a session exported from this or another Berth (a .berth.tar) under your key" data-testid="session-import">
          {importing.busy ? 'Importing…' : 'Import…'}
          <input
            type="file"
            accept=".tar,application/x-tar"
            hidden
            disabled={importing.busy}
            data-testid="session-import-file"
            onChange={(e) => {
              const archive = e.target.files?.[0];
              e.target.value = '';
              if (archive) void importing.run(async () => navigate({ page: 'session', id: (await api.importSession(archive)).id }));
            }}
          />
        </label>
      </div>
      <ErrorBanner error={importing.error} />
      {creating && <NewSession api={api} agents={agents.data?.data ?? []} onCancel={() => setCreating(false)} />}
      <div className="filters" data-testid="session-filters">
        <Field label="Status">
          <select value={filters.status} onChange={(e) => setFilters({ ...filters, status: e.target.value as SessionStatus | '' })} data-testid="filter-status">
            <option value="">any</option>
            {SESSION_STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Agent">
          <select value={filters.agentId} onChange={(e) => setFilters({ ...filters, agentId: e.target.value })} data-testid="filter-agent">
            <option value="">any</option>
            {agents.data?.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </Field>
        <label className="inline">
          <input type="checkbox" checked={filters.includeArchived} onChange={(e) => setFilters({ ...filters, includeArchived: e.target.checked })} data-testid="filter-archived" /> Include archived
        </label>
        <button type="button" onClick={sessions.reload}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={sessions.error} onRetry={sessions.reload} />
      {sessions.loading && !sessions.data && <Loading what="sessions" />}
      {sessions.data && sessions.data.data.length === 0 && <Empty>No sessions match. Start one with “New session”.</Empty>}
      {sessions.data && sessions.data.data.length > 0 && (
        <table data-testid="sessions-table">
          <thead>
            <tr>
              <th>Session</th>
              <th>Status</th>
              <th>Agent</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.data.map((s) => (
              <tr key={s.id} data-testid="session-row" className={s.archived_at ? 'archived clickable' : 'clickable'} onClick={() => navigate({ page: 'session', id: s.id })}>
                <td>
                  <a href={hrefFor({ page: 'session', id: s.id })}>{s.title || 'Untitled session'}</a>
                  <div className="muted mono">{s.id}</div>
                </td>
                <td>
                  <StatusBadge status={s.status} />
                  {s.archived_at && <span className="muted"> archived</span>}
                </td>
                <td>{s.agent.name ?? agentName(s.agent.id)}</td>
                <td>{when(s.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function NewSession({ api, agents, onCancel }: { api: Api; agents: Agent[]; onCancel: () => void }) {
  const envs = useLoad(() => api.listEnvironments(), [api]);
  const vaults = useLoad(() => api.listVaults(), [api]);
  const [vaultIds, setVaultIds] = useState<string[]>([]);
  const [agentId, setAgentId] = useState('');
  const [environmentId, setEnvironmentId] = useState('');
  const [title, setTitle] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [repoUrl, setRepoUrl] = useState('');
  const [repoRef, setRepoRef] = useState('');
  const [progress, setProgress] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const envList: Environment[] = envs.data?.data ?? [];
  const chosenAgent = agentId || agents[0]?.id || '';
  const chosenEnv = environmentId || envList[0]?.id || '';

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const resources: ResourceInput[] = [];
      for (const [i, file] of files.entries()) {
        setProgress(`Uploading ${file.name} (${i + 1} of ${files.length})…`);
        resources.push({ type: 'file', file_id: (await api.uploadFile(file)).id });
      }
      const ref = repoRef.trim();
      if (repoUrl.trim()) {
        const checkout = ref === '' ? undefined : /^[0-9a-f]{7,40}$/i.test(ref) ? { type: 'commit' as const, sha: ref } : { type: 'branch' as const, name: ref };
        resources.push({ type: 'github_repository', url: repoUrl.trim(), ...(checkout ? { checkout } : {}) });
      }
      setProgress(resources.length > 0 ? 'Starting the session…' : null);
      const session = await api.createSession({ agentId: chosenAgent, environmentId: chosenEnv, title, resources, vaultIds });
      navigate({ page: 'session', id: session.id });
    } catch (err) {
      setError(err as Error);
      setProgress(null);
      setBusy(false);
    }
  }

  if (agents.length === 0) return <Empty>Create an agent first (Agents tab).</Empty>;
  return (
    <form className="card form" onSubmit={submit} data-testid="session-form">
      <h3>New session</h3>
      <ErrorBanner error={envs.error} onRetry={envs.reload} />
      {envs.data && envList.length === 0 && <Empty>Create an environment first (Environments tab).</Empty>}
      <div className="grid2">
        <Field label="Agent">
          <select value={chosenAgent} onChange={(e) => setAgentId(e.target.value)} data-testid="session-agent">
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Environment">
          <select value={chosenEnv} onChange={(e) => setEnvironmentId(e.target.value)} data-testid="session-env">
            {envList.map((env) => (
              <option key={env.id} value={env.id}>
                {env.name} ({env.config.harness ?? 'default'})
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Field label="Title">
        <input value={title} onChange={(e) => setTitle(e.target.value)} data-testid="session-title" />
      </Field>
      <Field label="Files (mounted at /mnt/session/uploads/<file id>)">
        <input type="file" multiple onChange={(e) => setFiles([...(e.target.files ?? [])])} data-testid="session-files" />
      </Field>
      <div className="grid2">
        <Field label="Repository URL (public; cloned into /workspace/<repo>)">
          <input value={repoUrl} placeholder="https://github.com/org/repo.git" onChange={(e) => setRepoUrl(e.target.value)} data-testid="session-repo" />
        </Field>
        <Field label="Branch or commit">
          <input value={repoRef} placeholder="default branch" onChange={(e) => setRepoRef(e.target.value)} data-testid="session-repo-ref" />
        </Field>
      </div>
      {(vaults.data?.data.length ?? 0) > 0 && (
        <fieldset data-testid="session-vaults">
          <legend>Vaults (the egress adds their credentials to the session&apos;s requests; the agent never sees them)</legend>
          {vaults.data?.data.map((v) => (
            <label key={v.id} className="inline">
              <input
                type="checkbox"
                checked={vaultIds.includes(v.id)}
                onChange={(e) => setVaultIds(e.target.checked ? [...vaultIds, v.id] : vaultIds.filter((id) => id !== v.id))}
                data-testid="session-vault"
              />{' '}
              {v.display_name}
            </label>
          ))}
        </fieldset>
      )}
      {progress && <p className="muted" data-testid="session-progress">{progress}</p>}
      <ErrorBanner error={error} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy || !chosenAgent || !chosenEnv} data-testid="session-create">
          {busy ? 'Starting…' : 'Start session'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
