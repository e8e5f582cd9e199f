import { useState } from 'react';
import type { Api } from '../api/client';
import type { SessionResource, WorkspaceEntry } from '../api/types';
import { useLoad } from '../use-load';
import { Empty, ErrorBanner, Loading, when } from './ui';

/** Hands a Blob to the browser as a download named `name`. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

const size = (bytes: number): string => (bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`);

/** The files the agent wrote to /mnt/session/outputs/, captured after each turn; `version` changes reload it. */
export function OutputsPanel({ api, sessionId, version }: { api: Api; sessionId: string; version: number }) {
  const files = useLoad(() => api.listSessionFiles(sessionId), [api, sessionId, version]);
  const [error, setError] = useState<Error | null>(null);
  const download = async (id: string, name: string) => {
    setError(null);
    try {
      saveBlob(await api.fileContent(id), name.split('/').pop() ?? name);
    } catch (e) {
      setError(e as Error);
    }
  };
  return (
    <div className="panel" data-testid="outputs">
      <ErrorBanner error={files.error ?? error} onRetry={files.reload} />
      {files.loading && !files.data && <Loading what="outputs" />}
      {files.data && files.data.data.length === 0 && <Empty>No outputs yet. Files the agent writes to /mnt/session/outputs/ appear here after each turn.</Empty>}
      {files.data && files.data.data.length > 0 && (
        <table>
          <tbody>
            {files.data.data.map((f) => (
              <tr key={f.id} data-testid="output-row">
                <td className="mono">{f.filename}</td>
                <td className="muted">{size(f.size_bytes)}</td>
                <td className="muted">{when(f.created_at)}</td>
                <td>
                  <button type="button" className="link" onClick={() => void download(f.id, f.filename)} data-testid="output-download">
                    Download
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

/** Read-only browser of the session's /workspace: directories to walk, a file's text, downloads. */
export function WorkspaceBrowser({ api, sessionId, version }: { api: Api; sessionId: string; version: number }) {
  const [path, setPath] = useState('');
  const [open, setOpen] = useState<{ path: string; text: string | null; size: number } | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const listing = useLoad(() => api.workspaceEntries(sessionId, path), [api, sessionId, path, version]);
  const join = (name: string) => (path ? `${path}/${name}` : name);
  const parts = path ? path.split('/') : [];

  const view = async (entry: WorkspaceEntry) => {
    setError(null);
    if (entry.type === 'directory') {
      setOpen(null);
      setPath(join(entry.path));
      return;
    }
    try {
      const blob = await api.workspaceFile(sessionId, join(entry.path));
      const text = blob.size <= 512 * 1024 && isText(new Uint8Array(await blob.slice(0, 4096).arrayBuffer())) ? await blob.text() : null;
      setOpen({ path: join(entry.path), text, size: blob.size });
    } catch (e) {
      setError(e as Error);
    }
  };
  const save = async (what: () => Promise<Blob>, name: string) => {
    setError(null);
    try {
      saveBlob(await what(), name);
    } catch (e) {
      setError(e as Error);
    }
  };

  return (
    <div className="panel" data-testid="workspace">
      <div className="row">
        <nav className="crumbs" data-testid="workspace-path">
          <button type="button" className="link" onClick={() => setPath('')}>
            /workspace
          </button>
          {parts.map((part, i) => (
            <span key={i}>
              {' / '}
              <button type="button" className="link" onClick={() => setPath(parts.slice(0, i + 1).join('/'))}>
                {part}
              </button>
            </span>
          ))}
        </nav>
        <span className="spacer" />
        <button type="button" onClick={() => void save(() => api.workspaceArchive(sessionId), `${sessionId}-workspace.tar`)} data-testid="workspace-download">
          Download all (.tar)
        </button>
      </div>
      <ErrorBanner error={listing.error ?? error} onRetry={listing.reload} />
      {listing.loading && !listing.data && <Loading what="workspace" />}
      {listing.data && listing.data.data.length === 0 && <Empty>Nothing in {path ? `/workspace/${path}` : '/workspace'} yet.</Empty>}
      {listing.data && listing.data.data.length > 0 && (
        <table>
          <tbody>
            {listing.data.data.map((entry) => (
              <tr key={entry.path} className="clickable" onClick={() => void view(entry)} data-testid="workspace-entry">
                <td className="mono">
                  {entry.path}
                  {entry.type === 'directory' ? '/' : entry.type === 'symlink' ? ' →' : ''}
                </td>
                <td className="muted">{entry.type === 'file' ? size(entry.size) : entry.type}</td>
                <td className="muted">{when(entry.modified_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listing.data?.truncated && <p className="muted">Only the first entries are shown; download the archive for everything.</p>}
      {open && (
        <div className="file-view" data-testid="workspace-file">
          <div className="row">
            <span className="mono">/workspace/{open.path}</span>
            <span className="spacer" />
            <button type="button" className="link" onClick={() => void save(() => api.workspaceFile(sessionId, open.path), open.path.split('/').pop() ?? 'file')}>
              Download
            </button>
          </div>
          {open.text === null ? <p className="muted">Binary or large file ({size(open.size)}): download it to look inside.</p> : <pre data-testid="workspace-file-text">{open.text}</pre>}
        </div>
      )}
    </div>
  );
}

/** The files and repositories the session mounts. */
export function ResourcesList({ resources }: { resources: readonly SessionResource[] }) {
  if (resources.length === 0) return <Empty>No files or repositories are mounted in this session.</Empty>;
  return (
    <ul className="panel resources" data-testid="resources">
      {resources.map((r) => (
        <li key={r.id}>
          <span className="mono">{r.mount_path}</span>{' '}
          <span className="muted">
            {r.type === 'file' ? `file ${r.file_id}` : `${r.url}${r.checkout ? ` @ ${r.checkout.type === 'branch' ? r.checkout.name : r.checkout.sha.slice(0, 12)}` : ''}`}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** No NUL and mostly printable in the first bytes: worth showing as text. */
function isText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  let odd = 0;
  for (const b of bytes) if (b < 9 || (b > 13 && b < 32)) odd++;
  return odd <= bytes.length / 50;
}
