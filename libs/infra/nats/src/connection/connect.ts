import { readFileSync } from 'node:fs';
import { natsServers, Subjects } from '@berth/contracts';
import { AuthorizationError, credsAuthenticator, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

export type NatsConnectionOptions = Readonly<{
  /** One server, or a cluster's servers separated by commas (`NATS_URL=nats://a:4222,nats://b:4222`). */
  url: string;
  /** Shows in the server's connection list (`session-kernel`, `gateway`, …) and names the connection's inbox. */
  name: string;
  /** Path of the user's `.creds` file (`NATS_CREDS`); without one (or `creds`) the client connects anonymously. */
  credsFile?: string | null;
  /** The `.creds` text itself (credentials kept inside another secret file). */
  creds?: string;
  /** Reply subjects of this connection; defaults to the service inbox of `name` (`_INBOX.svc.<name>`). */
  inboxPrefix?: string;
  /** Base wait between reconnect attempts; a random jitter up to half of it is added. */
  reconnectWaitMs?: number;
}>;

const CREDS = /-----BEGIN NATS USER JWT-----\s*\n\s*(\S+)\s*\n[\s\S]*-----BEGIN USER NKEY SEED-----\s*\n\s*(SU[A-Z2-7]+)\s*\n/;

/**
 * Reads and checks a creds file once, at start, so a wrong path or file stops the service with a
 * message naming the setting instead of an opaque refusal from the broker.
 */
export function readCredsFile(path: string, setting = 'NATS_CREDS'): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${setting}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  return checkedCreds(text, `${setting}: ${path}`);
}

function checkedCreds(text: string, what: string): Uint8Array {
  if (!CREDS.test(text)) throw new Error(`${what} is not NATS credentials (a user JWT and an nkey seed)`);
  return new TextEncoder().encode(text);
}

/**
 * A connection that never gives up: services outlive broker restarts, so reconnects are unlimited
 * and jittered (many clients reconnecting at once must not arrive in lockstep). The first connect
 * also waits for the broker, so start order between services and NATS does not matter; refused
 * credentials fail it at once.
 */
export async function connectNats(options: NatsConnectionOptions): Promise<NatsConnection> {
  const wait = options.reconnectWaitMs ?? 500;
  const creds = options.creds ? checkedCreds(options.creds, 'creds') : options.credsFile ? readCredsFile(options.credsFile) : null;
  try {
    return await connect({
      servers: natsServers(options.url),
      name: options.name,
      inboxPrefix: options.inboxPrefix ?? Subjects.serviceInbox(options.name),
      ...(creds ? { authenticator: credsAuthenticator(creds) } : {}),
      maxReconnectAttempts: -1,
      reconnectTimeWait: wait,
      reconnectJitter: Math.round(wait / 2),
      waitOnFirstConnect: true,
    });
  } catch (e) {
    if (e instanceof AuthorizationError) {
      throw new Error(
        creds
          ? `NATS at ${options.url} refused the credentials of ${options.name} (${e.message}); check ${options.credsFile ? `NATS_CREDS (${options.credsFile})` : 'them'}`
          : `NATS at ${options.url} requires credentials (${e.message}); set NATS_CREDS to this service's .creds file`,
      );
    }
    throw e;
  }
}

/**
 * The inbox prefix a connection was opened with (what `request()` and JetStream use for replies);
 * code that makes its own inboxes must use it too, or its user may not subscribe to them.
 */
export function inboxPrefixOf(nc: NatsConnection): string {
  return (nc as NatsConnection & { options?: { inboxPrefix?: string } }).options?.inboxPrefix ?? '_INBOX';
}
