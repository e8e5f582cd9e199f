import { useMemo, useState } from 'react';
import { createApi } from './api/client';
import { clearCredentials, loadCredentials, saveCredentials, type Credentials } from './auth';
import { AgentsPage } from './pages/AgentsPage';
import { EnvironmentsPage } from './pages/EnvironmentsPage';
import { SessionsPage } from './pages/SessionsPage';
import { SessionView } from './pages/SessionView';
import { SignIn } from './pages/SignIn';
import { VaultsPage } from './pages/VaultsPage';
import { WebhooksPage } from './pages/WebhooksPage';
import { hrefFor, useRoute } from './router';

export function App() {
  const [credentials, setCredentials] = useState<Credentials | null>(loadCredentials);
  const route = useRoute();
  const api = useMemo(() => (credentials ? createApi(credentials) : null), [credentials]);

  if (!credentials || !api) {
    return (
      <SignIn
        onSignedIn={(c) => {
          saveCredentials(c);
          setCredentials(c);
        }}
      />
    );
  }

  const tab = route.page === 'session' ? 'sessions' : route.page;
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">Berth</span>
        <nav>
          {(['sessions', 'agents', 'environments', 'webhooks', 'vaults'] as const).map((page) => (
            <a key={page} href={hrefFor({ page })} className={tab === page ? 'active' : ''} data-testid={`nav-${page}`}>
              {page[0].toUpperCase() + page.slice(1)}
            </a>
          ))}
        </nav>
        <button
          type="button"
          className="link"
          data-testid="signout"
          onClick={() => {
            clearCredentials();
            setCredentials(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main className="content">
        {route.page === 'sessions' && <SessionsPage api={api} />}
        {route.page === 'session' && <SessionView key={route.id} api={api} sessionId={route.id} />}
        {route.page === 'agents' && <AgentsPage api={api} />}
        {route.page === 'environments' && <EnvironmentsPage api={api} />}
        {route.page === 'webhooks' && <WebhooksPage api={api} />}
        {route.page === 'vaults' && <VaultsPage api={api} />}
      </main>
    </div>
  );
}
