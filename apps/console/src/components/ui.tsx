import type { ReactNode } from 'react';
import { ApiError } from '../api/client';

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge badge-${status}`} data-testid="status-badge">
      {status}
    </span>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted loading" data-testid="loading">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <div className="empty" data-testid="empty">
      {children}
    </div>
  );
}

/** An error as a person reads it: the message, and the API's code when there is one. */
export function ErrorBanner({ error, onRetry }: { error: Error | null; onRetry?: () => void }) {
  if (!error) return null;
  const code = error instanceof ApiError ? (error.code ?? error.type) : null;
  return (
    <div className="error-banner" role="alert" data-testid="error">
      <span>{error.message}</span>
      {code && <code>{code}</code>}
      {onRetry && (
        <button type="button" className="link" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
    </label>
  );
}

/** The "show archived" switch of a catalog page (agents, environments). */
export function ArchivedToggle({ checked, onChange }: { checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label className="inline">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> Show archived
    </label>
  );
}

/** Edit and Archive for a live catalog row (test ids `<testId>-edit`, `<testId>-archive`); an archived row is read-only. */
export function RowActions({ archived, testId, onEdit, onArchive }: { archived: boolean; testId: string; onEdit: () => void; onArchive: () => void }) {
  if (archived) return <span className="muted">archived</span>;
  return (
    <>
      <button type="button" onClick={onEdit} data-testid={`${testId}-edit`}>
        Edit
      </button>
      <button type="button" className="danger" onClick={onArchive} data-testid={`${testId}-archive`}>
        Archive
      </button>
    </>
  );
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');
