import { writeFileSync } from 'node:fs';
import { details, table } from '../output/format';
import { str, type Command, type Output } from './command';

type NatsCredential = { id: string; name: string; public_key: string; created_at: string; revoked_at: string | null };
type Minted = NatsCredential & { creds: string; connection: { servers: string; inbox_prefix: string; stream: string; subjects: string } };

const credentialOutput = (c: NatsCredential, extra: [string, unknown][] = []): Output => ({
  json: c,
  human: details([['id', c.id], ['name', c.name], ['public key', c.public_key], ['created', c.created_at], ['revoked', c.revoked_at], ...extra]),
});

/** Outside subscribers' NATS credentials (docs/events.md), minted by the gateway for the caller's owner. */
export const natsCredentialCommands: readonly Command[] = [
  {
    name: ['nats-credentials', 'create'],
    args: [],
    options: {
      name: { type: 'string', help: 'a label for the credential (default: default)' },
      out: { type: 'string', help: 'write the .creds file here (0600) instead of printing it' },
    },
    summary: "mint a read-only NATS credential for your sessions' events (shown once)",
    run: async ({ api }, _a, o) => {
      const minted = await api.request<Minted>('POST', '/v1/nats_credentials', { body: { name: str(o, 'name') } });
      const out = str(o, 'out');
      if (out) writeFileSync(out, minted.creds, { mode: 0o600 });
      const { connection } = minted;
      const human = credentialOutput(minted, [
        ['servers', connection.servers],
        ['stream', connection.stream],
        ['inbox prefix', connection.inbox_prefix],
        ['creds', out ? `written to ${out}` : `\n${minted.creds}`],
      ]).human;
      return { json: minted, human };
    },
  },
  {
    name: ['nats-credentials', 'list'],
    args: [],
    options: {},
    summary: 'list your NATS credentials',
    run: async ({ api }) => {
      const page = await api.request<{ data: NatsCredential[] }>('GET', '/v1/nats_credentials');
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (c) => c.id },
          { header: 'name', value: (c) => c.name },
          { header: 'created', value: (c) => c.created_at },
          { header: 'revoked', value: (c) => c.revoked_at ?? '' },
        ]),
      };
    },
  },
  {
    name: ['nats-credentials', 'revoke'],
    args: ['credential'],
    options: {},
    summary: 'revoke a NATS credential (refused from now on, connected clients dropped)',
    run: async ({ api }, a) => credentialOutput(await api.request<NatsCredential>('DELETE', `/v1/nats_credentials/${a.credential}`)),
  },
];
