import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EGRESS_BUILD_DENIALS_FILE } from '@berth/docker';
import type { EgressDenial } from '@berth/egress-domain';
import type { Logger } from '@berth/ports';
import type { BuildContext } from '../context/sandbox-contexts';

/** Refusals kept per build (a build that probes many hosts must not fill the disk). */
const PER_BUILD = 32;

/**
 * An image build's refusals, for the sandbox-manager: appended (JSON lines) to the build's egress
 * directory, outside the build container's reach, so the failed build quotes the egress's own
 * words (apt and npm print only "403"). No session exists to hear them as events.
 */
export class BuildDenials {
  private readonly counts = new Map<string, number>();

  constructor(private readonly deps: Readonly<{ root: string; log: Logger }>) {}

  record(dirId: string, context: BuildContext, denial: EgressDenial): void {
    this.deps.log.warn('refused a destination of an image build', { environment_id: context.environmentId, sandbox_id: context.sandboxName, host: denial.host, port: denial.port, reason: denial.reason });
    const count = this.counts.get(dirId) ?? 0;
    if (count >= PER_BUILD) return;
    this.counts.set(dirId, count + 1);
    const line = `${JSON.stringify({ host: denial.host, port: denial.port, reason: denial.reason, message: denial.message })}\n`;
    appendFile(join(this.deps.root, dirId, EGRESS_BUILD_DENIALS_FILE), line, { mode: 0o644 }).catch((error: unknown) => this.deps.log.warn('could not record a refusal of an image build', { dir: dirId, err: error }));
  }

  forget(dirId: string): void {
    this.counts.delete(dirId);
  }
}
