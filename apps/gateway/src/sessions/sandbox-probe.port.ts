import type { SandboxProbe as ProbeFacts } from '@berth/contracts';

/** Facts about a session's sandbox, gathered before asking the kernel to recover it. */
export interface SandboxProbe {
  probe(sessionId: string): Promise<ProbeFacts>;
}

/** What recovery assumes when nobody can say: no sandbox, so recover by starting a new one. */
export const NO_SANDBOX: ProbeFacts = { exists: false, running: false, expiry_known: true, expired: false };
