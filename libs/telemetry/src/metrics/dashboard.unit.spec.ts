import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { consumerMetrics, egressMetrics, httpMetrics, kernelMetrics, reconcilerMetrics, sandboxMetrics, vaultMetrics, webhookMetrics } from './berth-metrics';

/** The Grafana dashboard in deploy/ and the metrics the services export cannot drift apart. */
describe('deploy/grafana/berth-dashboard.json', () => {
  const dashboard = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'deploy', 'grafana', 'berth-dashboard.json'), 'utf8')) as {
    panels: { type: string; title: string; targets?: { expr: string }[] }[];
  };
  const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
  const charted = new Set(exprs.flatMap((e) => [...e.matchAll(/\b(berth_[a-z_]+?)(?:_bucket|_count|_sum)?\b/g)].map((m) => m[1])));

  const registry = new Registry();
  httpMetrics(registry);
  consumerMetrics(registry);
  kernelMetrics(registry);
  sandboxMetrics(registry, { turnsRunning: () => 0, sandboxes: async () => ({}) });
  reconcilerMetrics(registry);
  egressMetrics(registry);
  webhookMetrics(registry);
  vaultMetrics(registry);
  const exported = new Set(registry.getMetricsAsArray().map((m) => m.name));

  it('charts every metric Berth exports', () => {
    expect([...exported].filter((name) => !charted.has(name))).toEqual([]);
  });

  it('charts no metric Berth does not export', () => {
    expect([...charted].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('gives every chart a title and a query', () => {
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.title).not.toBe('');
      expect(panel.targets?.length).toBeGreaterThan(0);
    }
  });
});
