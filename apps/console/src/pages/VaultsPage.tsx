import { useState, type FormEvent } from 'react';
import type { Api, CredentialInput } from '../api/client';
import type { Vault, VaultCredential } from '../api/types';
import { Empty, ErrorBanner, Field, Loading, when } from '../components/ui';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';
import { refreshLine, type RefreshLine } from './credential-refresh';

const TONE_CLASS: Record<RefreshLine['tone'], string> = { muted: 'muted', warning: 'tone-waiting', danger: 'tone-failed' };

const target = (c: VaultCredential) =>
  c.auth.mcp_server_url ?? `$${c.auth.secret_name ?? ''} → ${c.auth.networking?.type === 'limited' ? (c.auth.networking.allowed_hosts ?? []).join(', ') : 'any host'}`;

/** Vaults and their credentials. Secrets are write-only: typed once into a password field, never shown. */
export function VaultsPage({ api }: { api: Api }) {
  const vaults = useLoad(() => api.listVaults(), [api]);
  const [name, setName] = useState('');
  const creating = useAction();

  async function create(e: FormEvent) {
    e.preventDefault();
    await creating.run(async () => {
      await api.createVault(name);
      setName('');
      vaults.reload();
    });
  }

  return (
    <section>
      <div className="page-head">
        <h2>Vaults</h2>
        <form className="row" onSubmit={create}>
          <input required placeholder="new vault name" value={name} onChange={(e) => setName(e.target.value)} data-testid="vault-name" />
          <button type="submit" className="primary" disabled={creating.busy} data-testid="vault-create">
            New vault
          </button>
        </form>
      </div>
      <p className="muted">
        Credentials are stored encrypted and never shown again. A session that names the vault gets them added to its requests by the egress, never inside its sandbox; OAuth tokens
        created with a refresh configuration (API or CLI) are refreshed by Berth before they expire.
      </p>
      <ErrorBanner error={creating.error} />
      <ErrorBanner error={vaults.error} onRetry={vaults.reload} />
      {vaults.loading && !vaults.data && <Loading what="vaults" />}
      {vaults.data && vaults.data.data.length === 0 && <Empty>No vaults yet. A vault holds credentials (MCP server tokens, secrets for given hosts).</Empty>}
      {vaults.data?.data.map((v) => <VaultCard key={v.id} api={api} vault={v} onArchived={vaults.reload} />)}
    </section>
  );
}

function VaultCard({ api, vault, onArchived }: { api: Api; vault: Vault; onArchived: () => void }) {
  const credentials = useLoad(() => api.listCredentials(vault.id), [api, vault.id]);
  const [adding, setAdding] = useState(false);
  const acting = useAction();
  return (
    <div className="card" data-testid="vault-card">
      <div className="row">
        <strong>{vault.display_name}</strong>
        <span className="muted mono">{vault.id}</span>
        <button type="button" onClick={() => setAdding(true)} data-testid="credential-new">
          Add credential
        </button>
        <button type="button" className="danger" onClick={() => window.confirm(`Archive vault ${vault.display_name}?`) && acting.run(async () => { await api.archiveVault(vault.id); onArchived(); })}>
          Archive
        </button>
      </div>
      {adding && (
        <CredentialForm
          api={api}
          vaultId={vault.id}
          onDone={() => {
            setAdding(false);
            credentials.reload();
          }}
          onCancel={() => setAdding(false)}
        />
      )}
      <ErrorBanner error={acting.error ?? credentials.error} />
      {credentials.data && credentials.data.data.length === 0 && <span className="muted">No credentials.</span>}
      {credentials.data && credentials.data.data.length > 0 && (
        <table>
          <tbody>
            {credentials.data.data.map((c) => (
              <tr key={c.id} data-testid="credential-row">
                <td>
                  <strong>{c.display_name ?? c.auth.type}</strong>
                  <div className="muted mono">{c.id}</div>
                </td>
                <td className="mono">
                  {target(c)}
                  <RefreshStatus credential={c} />
                </td>
                <td className="mono">••••••</td>
                <td>{when(c.created_at)}</td>
                <td>
                  <button type="button" onClick={() => acting.run(async () => { await api.archiveCredential(vault.id, c.id); credentials.reload(); })} data-testid="credential-archive">
                    Archive
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** An OAuth token's expiry and refresh: past the expiry, without a refresh, the egress refuses the server's requests. */
function RefreshStatus({ credential }: { credential: VaultCredential }) {
  const line = refreshLine(credential);
  return line === null ? null : (
    <div className={TONE_CLASS[line.tone]} data-testid="credential-refresh">
      {line.text}
    </div>
  );
}

function CredentialForm({ api, vaultId, onDone, onCancel }: { api: Api; vaultId: string; onDone: () => void; onCancel: () => void }) {
  const [kind, setKind] = useState<'mcp' | 'variable'>('mcp');
  const [displayName, setDisplayName] = useState('');
  const [where, setWhere] = useState('');
  const [hosts, setHosts] = useState('');
  const [secret, setSecret] = useState('');
  const saving = useAction();

  async function submit(e: FormEvent) {
    e.preventDefault();
    const input: CredentialInput =
      kind === 'mcp'
        ? { kind, displayName, mcpServerUrl: where, token: secret }
        : { kind, displayName, secretName: where, secretValue: secret, hosts: hosts.split(',').map((h) => h.trim()).filter(Boolean) };
    await saving.run(async () => {
      await api.createCredential(vaultId, input);
      setSecret('');
      onDone();
    });
  }

  return (
    <form className="form" onSubmit={submit} data-testid="credential-form">
      <div className="grid2">
        <Field label="Kind">
          <select value={kind} onChange={(e) => setKind(e.target.value as 'mcp' | 'variable')} data-testid="credential-kind">
            <option value="mcp">Bearer token for an MCP server</option>
            <option value="variable">Secret for given hosts</option>
          </select>
        </Field>
        <Field label="Name">
          <input value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </Field>
        <Field label={kind === 'mcp' ? 'MCP server URL' : 'Variable name'}>
          <input required value={where} onChange={(e) => setWhere(e.target.value)} data-testid="credential-where" />
        </Field>
        {kind === 'variable' && (
          <Field label="Hosts (comma-separated; empty: any)">
            <input value={hosts} onChange={(e) => setHosts(e.target.value)} />
          </Field>
        )}
        <Field label="Secret (write-only)">
          <input required type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} data-testid="credential-secret" />
        </Field>
      </div>
      <ErrorBanner error={saving.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={saving.busy} data-testid="credential-save">
          Store credential
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
