import type { Topology } from './topology';

/**
 * The topology as the JSON files under `deploy/nats/` (one per stream and consumer), in the shape
 * `nats stream add --config` / `nats consumer add <stream> --config` accept.
 */
export function topologyDeployFiles(topology: Topology): Record<string, string> {
  const files: Record<string, string> = {};
  for (const s of topology.streams) files[`stream.${s.name}.json`] = JSON.stringify(s, null, 2) + '\n';
  for (const c of topology.consumers) {
    files[`consumer.${c.stream}.${c.config.durable_name}.json`] = JSON.stringify(c.config, null, 2) + '\n';
  }
  return files;
}
