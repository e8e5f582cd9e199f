import { useState, type FormEvent } from 'react';
import { createApi } from '../api/client';
import type { Credentials } from '../auth';
import { ErrorBanner, Field } from '../components/ui';
import { useAction } from '../use-action';

/** Checks the key against the API before keeping it, so a typo fails here and not on every page. */
export function SignIn({ onSignedIn }: { onSignedIn: (c: Credentials) => void }) {
  const [apiKey, setApiKey] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const signingIn = useAction();

  async function submit(e: FormEvent) {
    e.preventDefault();
    await signingIn.run(async () => {
      await createApi({ apiKey: apiKey.trim(), baseUrl: baseUrl.trim() }).listAgents();
      onSignedIn({ apiKey: apiKey.trim(), baseUrl: baseUrl.trim() });
    });
  }

  return (
    <main className="signin">
      <form className="card" onSubmit={submit}>
        <h1>Berth</h1>
        <p className="muted">Sign in with an API key. It stays in this tab only.</p>
        <Field label="API key">
          <input type="password" autoComplete="off" required value={apiKey} onChange={(e) => setApiKey(e.target.value)} data-testid="signin-key" />
        </Field>
        <Field label="API URL (blank for this server)">
          <input type="url" placeholder={window.location.origin} value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} data-testid="signin-url" />
        </Field>
        <ErrorBanner error={signingIn.error} />
        <button type="submit" className="primary" disabled={signingIn.busy || !apiKey.trim()} data-testid="signin-submit">
          {signingIn.busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
