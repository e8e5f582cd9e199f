import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Files `nats-init --cluster-routes` adds to the auth directory (secrets, 0600). */
export const ClusterFiles = {
  /** The `cluster {}` block every node includes: its routes and the route password. */
  config: 'cluster.conf',
  /** The route password, kept across runs so a rewritten `cluster.conf` still admits the running nodes. */
  secret: 'cluster-route.secret',
} as const;

export type ClusterRoutes = Readonly<{
  /** The cluster's name (every node the same). */
  name: string;
  /** Where this node listens for routes (`host:port`). */
  listen: string;
  /** Every node's route address (`host:port`), this one included: nats-server ignores its own. */
  routes: readonly string[];
  /** What a route must present: without it, anyone reaching the route port could join the cluster and read every stream. */
  password: string;
}>;

const ROUTE_USER = 'berth-route';

/** The `cluster {}` block of nats-server's configuration. */
export function clusterConfig(c: ClusterRoutes): string {
  for (const route of c.routes) {
    if (!/^[A-Za-z0-9.-]+:\d+$/.test(route)) throw new Error(`cluster route ${JSON.stringify(route)} is not host:port`);
  }
  return [
    'cluster {',
    `  name: ${JSON.stringify(c.name)}`,
    `  listen: ${JSON.stringify(c.listen)}`,
    `  authorization { user: ${ROUTE_USER}, password: ${JSON.stringify(c.password)}, timeout: 2 }`,
    '  routes: [',
    ...c.routes.map((r) => `    ${JSON.stringify(`nats-route://${ROUTE_USER}:${c.password}@${r}`)}`),
    '  ]',
    '}',
    '',
  ].join('\n');
}

/** The route password in `dir`, made once (URL-safe: it travels inside the route URLs). */
export function clusterRoutePassword(dir: string): string {
  const path = join(dir, ClusterFiles.secret);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const password = randomBytes(24).toString('base64url');
  writeFileSync(path, `${password}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return password;
}

/** Writes `dir/cluster.conf` for these routes (rewritten each run; the password is kept). */
export function writeClusterConfig(dir: string, routes: readonly string[], listen = '0.0.0.0:6222', name = 'berth'): string {
  const path = join(dir, ClusterFiles.config);
  writeFileSync(path, clusterConfig({ name, listen, routes, password: clusterRoutePassword(dir) }), { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}
