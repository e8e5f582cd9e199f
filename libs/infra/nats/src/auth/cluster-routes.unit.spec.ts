import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsServers } from '@berth/contracts';
import { clusterConfig, ClusterFiles, writeClusterConfig } from './cluster-routes';

describe('the NATS cluster block', () => {
  it('lists every route with the route password and asks the same password of every route that connects', () => {
    const text = clusterConfig({ name: 'berth', listen: '0.0.0.0:6222', routes: ['nats-1:6222', 'nats-2:6222'], password: 'pw-1' });
    expect(text).toContain('authorization { user: berth-route, password: "pw-1", timeout: 2 }');
    expect(text).toContain('"nats-route://berth-route:pw-1@nats-1:6222"');
    expect(text).toContain('"nats-route://berth-route:pw-1@nats-2:6222"');
    expect(text).toContain('listen: "0.0.0.0:6222"');
  });

  it('refuses a route that is not host:port (it would be pasted into the server config)', () => {
    expect(() => clusterConfig({ name: 'berth', listen: '0.0.0.0:6222', routes: ['nats-1:6222"\ninclude /etc/passwd'], password: 'pw' })).toThrow(/not host:port/);
    expect(() => clusterConfig({ name: 'berth', listen: '0.0.0.0:6222', routes: ['nats-1'], password: 'pw' })).toThrow(/not host:port/);
  });

  it('keeps the route password across runs, so rewritten routes still admit the running nodes; both files are secret', () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-cluster-'));
    try {
      writeClusterConfig(dir, ['a:6222']);
      const first = readFileSync(join(dir, ClusterFiles.secret), 'utf8').trim();
      expect(first).toMatch(/^[A-Za-z0-9_-]{32}$/);
      writeClusterConfig(dir, ['a:6222', 'b:6222', 'c:6222']);
      const conf = readFileSync(join(dir, ClusterFiles.config), 'utf8');
      expect(conf).toContain(`nats-route://berth-route:${first}@c:6222`);
      for (const f of [ClusterFiles.secret, ClusterFiles.config]) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('natsServers', () => {
  it('reads one server or a comma-separated cluster', () => {
    expect(natsServers('nats://a:4222')).toEqual(['nats://a:4222']);
    expect(natsServers('nats://a:4222, nats://b:4222,,nats://c:4222 ')).toEqual(['nats://a:4222', 'nats://b:4222', 'nats://c:4222']);
  });
});
