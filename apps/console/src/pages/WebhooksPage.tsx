import { useState, type FormEvent } from 'react';
import type { Api } from '../api/client';
import { WEBHOOK_EVENT_TYPES, type WebhookEndpoint } from '../api/types';
import { Empty, ErrorBanner, Field, Loading, when } from '../components/ui';
import { useAction } from '../use-action';
import { useLoad } from '../use-load';

/** Webhook endpoints and their delivery logs. A signing secret is shown once, right after it is made. */
export function WebhooksPage({ api }: { api: Api }) {
  const endpoints = useLoad(() => api.listWebhooks(), [api]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const acting = useAction();

  const change = (f: () => Promise<unknown>) => acting.run(async () => {
    await f();
    endpoints.reload();
  });

  return (
    <section>
      <div className="page-head">
        <h2>Webhooks</h2>
        <button type="button" className="primary" onClick={() => setCreating(true)} data-testid="webhook-new">
          New endpoint
        </button>
      </div>
      {creating && (
        <WebhookForm
          api={api}
          onDone={(created) => {
            setCreating(false);
            if (created.signing_secret) setSecret({ id: created.id, secret: created.signing_secret });
            endpoints.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {secret && (
        <div className="card" data-testid="webhook-secret">
          <strong>Signing secret of {secret.id}</strong>
          <code data-testid="webhook-secret-value">{secret.secret}</code>
          <span className="muted">Store it now: it is not shown again. Receivers verify deliveries with it (e.g. client.beta.webhooks.unwrap()).</span>
          <div className="row">
            <button type="button" onClick={() => setSecret(null)} data-testid="webhook-secret-dismiss">
              I stored it
            </button>
          </div>
        </div>
      )}
      <ErrorBanner error={acting.error} />
      <ErrorBanner error={endpoints.error} onRetry={endpoints.reload} />
      {endpoints.loading && !endpoints.data && <Loading what="webhook endpoints" />}
      {endpoints.data && endpoints.data.data.length === 0 && <Empty>No webhook endpoints. An endpoint receives signed session events (idle, running, requires action…) at a URL you own.</Empty>}
      {endpoints.data && endpoints.data.data.length > 0 && (
        <table data-testid="webhooks-table">
          <thead>
            <tr>
              <th>Endpoint</th>
              <th>Events</th>
              <th>State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {endpoints.data.data.map((e) => [
              <tr key={e.id} data-testid="webhook-row">
                <td>
                  <strong className="mono">{e.url}</strong>
                  <div className="muted mono">
                    {e.name ? `${e.name} · ` : ''}
                    {e.id}
                  </div>
                </td>
                <td className="mono">{e.enabled_events.join(', ')}</td>
                <td data-testid="webhook-state">
                  {e.disabled_reason ? `${e.state} (${e.disabled_reason})` : e.state}
                  {e.failing_since && (
                    <div className="muted" data-testid="webhook-failing">
                      failing since {e.failing_since}
                      {e.state === 'enabled' && e.next_retry_at ? `, next retry ${e.next_retry_at}` : ''}
                    </div>
                  )}
                </td>
                <td className="actions">
                  <button type="button" onClick={() => setOpen(open === e.id ? null : e.id)} data-testid="webhook-deliveries">
                    {open === e.id ? 'Hide deliveries' : 'Deliveries'}
                  </button>
                  <button type="button" onClick={() => change(() => api.setWebhookState(e.id, e.state === 'enabled' ? 'disabled' : 'enabled'))} data-testid="webhook-toggle">
                    {e.state === 'enabled' ? 'Disable' : 'Enable'}
                  </button>
                  <button type="button" className="danger" onClick={() => window.confirm(`Delete ${e.url} and its delivery log?`) && change(() => api.deleteWebhook(e.id))} data-testid="webhook-delete">
                    Delete
                  </button>
                </td>
              </tr>,
              open === e.id && (
                <tr key={`${e.id}-log`}>
                  <td colSpan={4}>
                    <DeliveryLog api={api} endpoint={e} />
                  </td>
                </tr>
              ),
            ])}
          </tbody>
        </table>
      )}
    </section>
  );
}

function DeliveryLog({ api, endpoint }: { api: Api; endpoint: WebhookEndpoint }) {
  const log = useLoad(() => api.listDeliveries(endpoint.id), [api, endpoint.id]);
  const redelivering = useAction();
  return (
    <div className="card" data-testid="delivery-log">
      <div className="row">
        <strong>Deliveries (newest first)</strong>
        <button type="button" className="link" onClick={log.reload} data-testid="delivery-refresh">
          Refresh
        </button>
      </div>
      <ErrorBanner error={redelivering.error ?? log.error} />
      {log.data && log.data.data.length === 0 && <span className="muted">Nothing delivered yet.</span>}
      {log.data && log.data.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Event</th>
              <th>State</th>
              <th>Attempts</th>
              <th>Last answer</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {log.data.data.map((d) => {
              const last = d.attempts.at(-1);
              return (
                <tr key={d.id} data-testid="delivery-row">
                  <td className="mono">
                    {d.event_type}
                    <div className="muted">{when(d.created_at)}</div>
                  </td>
                  <td data-testid="delivery-state">{d.state}{d.redelivery_of ? ' (redelivery)' : ''}</td>
                  <td>{d.attempt_count}{d.next_attempt_at ? `, next ${when(d.next_attempt_at)}` : ''}</td>
                  <td className="mono">{last ? (last.status_code ?? last.error ?? '') : '—'}</td>
                  <td>
                    {d.state !== 'pending' && (
                      <button type="button" onClick={() => redelivering.run(async () => { await api.redeliver(endpoint.id, d.id); log.reload(); })} data-testid="delivery-redeliver">
                        Redeliver
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

function WebhookForm({ api, onDone, onCancel }: { api: Api; onDone: (created: WebhookEndpoint) => void; onCancel: () => void }) {
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [events, setEvents] = useState<string[]>(['session.status_idled', 'session.requires_action']);
  const saving = useAction();
  const toggle = (type: string) => setEvents(events.includes(type) ? events.filter((t) => t !== type) : [...events, type]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    await saving.run(async () => onDone(await api.createWebhook({ url, name, events })));
  }

  return (
    <form className="card form" onSubmit={submit} data-testid="webhook-form">
      <h3>New webhook endpoint</h3>
      <div className="grid2">
        <Field label="URL">
          <input required type="url" placeholder="https://hooks.example.com/berth" value={url} onChange={(e) => setUrl(e.target.value)} data-testid="webhook-url" />
        </Field>
        <Field label="Name">
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
      </div>
      <fieldset className="events">
        <legend>Events</legend>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label key={type} className="inline mono">
            <input type="checkbox" checked={events.includes(type)} onChange={() => toggle(type)} data-testid={`webhook-event-${type}`} /> {type}
          </label>
        ))}
      </fieldset>
      <ErrorBanner error={saving.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={saving.busy || events.length === 0} data-testid="webhook-save">
          {saving.busy ? 'Creating…' : 'Create endpoint'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
