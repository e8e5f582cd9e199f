import { chownSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { adoptAnonymousJetStream, ensureNatsAuth, NatsAuthFiles, readAuthKeys, writeClusterConfig } from '@berth/nats';

const USAGE = `usage: nats-init --dir <auth dir> [--resolver-dir <dir>] [--jetstream-dir <nats store dir>] [--cluster-routes host:port,…] [--chown uid:gid] [--quiet]

Creates Berth's NATS auth once (operator, accounts, one user per service, the gateway's issuer):
  <dir>/server-auth.conf        include it in nats-server's config
  <dir>/creds/<service>.creds   NATS_CREDS of each service
  <dir>/issuer.json             BERTH_NATS_ISSUER of the gateway (mints subscriber credentials)
  <dir>/keys.json               every seed: keep it offline-safe, nothing at run time needs it
Run again at any time: existing files are kept, a newly declared service gets its creds.
--resolver-dir   where nats-server keeps account JWTs it is sent (default <dir>/resolver)
--jetstream-dir  the server's store dir: streams of a server that ran without auth move to Berth's account
--cluster-routes a NATS cluster's nodes (host:port of each route listener): also writes
                 <dir>/cluster.conf, the cluster block every node includes, with a route password
                 (<dir>/cluster-route.secret, kept across runs); routes listen on --cluster-listen
                 (default 0.0.0.0:6222). See docs/scale-out.md.
--chown          hand the creds and issuer.json to the services' user (Compose runs this as root)`;

/** Idempotent: `npm start` runs it at every start, Compose once as an init step. */
function main(): void {
  const { values } = parseArgs({
    options: { dir: { type: 'string' }, 'resolver-dir': { type: 'string' }, 'jetstream-dir': { type: 'string' }, 'cluster-routes': { type: 'string' }, 'cluster-listen': { type: 'string' }, chown: { type: 'string' }, quiet: { type: 'boolean' }, help: { type: 'boolean' } },
  });
  const owner = values.chown?.match(/^(\d+):(\d+)$/);
  if (values.chown && !owner) {
    console.error(`--chown must be <uid>:<gid>\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) return void console.log(USAGE);
  if (!values.dir) {
    console.error(`--dir is required\n${USAGE}`);
    process.exit(2);
  }
  const dir = resolve(values.dir);
  const say = (line: string) => values.quiet || console.error(line);
  void ensureNatsAuth(dir, resolve(values['resolver-dir'] ?? join(dir, 'resolver'))).then(
    ({ created, issued }) => {
      if (values['cluster-routes']) {
        const routes = values['cluster-routes'].split(',').map((r) => r.trim()).filter((r) => r !== '');
        say(`nats-init: wrote ${writeClusterConfig(dir, routes, values['cluster-listen'])} (include it in every node's config)`);
      }
      if (created) say(`nats-init: created NATS auth in ${dir} (include ${join(dir, NatsAuthFiles.serverConfig)} in nats-server's config)`);
      if (issued.length > 0) say(`nats-init: issued credentials for ${issued.join(', ')}`);
      if (owner) {
        // What the services read; keys.json and the server's config stay with the user running this.
        const files = [join(dir, NatsAuthFiles.issuer), ...readdirSync(join(dir, 'creds')).map((f) => join(dir, 'creds', f))];
        for (const file of files) chownSync(file, Number(owner[1]), Number(owner[2]));
      }
      if (values['jetstream-dir'] && adoptAnonymousJetStream(resolve(values['jetstream-dir']), readAuthKeys(dir))) {
        say(`nats-init: moved the streams of the server's unauthenticated account into Berth's account`);
      }
    },
    (e: unknown) => {
      console.error(`nats-init failed: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}

main();
