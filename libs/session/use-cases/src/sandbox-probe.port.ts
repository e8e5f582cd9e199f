import type { SandboxProbe as ProbeFacts } from '@berth/contracts';

/** What the gateway knows of a session's sandbox from the read model, before asking about it. */
export type ProbeTarget = Readonly<{
  sessionId: string;
  /** The bound sandbox; null when none is bound. */
  sandbox: Readonly<{ generation: number; expires_at: string | null }> | null;
}>;

/** Facts about a session's sandbox, gathered before asking the kernel to recover it (its decision stays pure). */
export interface SandboxProbe {
  probe(target: ProbeTarget): Promise<ProbeFacts>;
}

/** What recovery assumes when nobody can say: no sandbox, so recover by starting a new one. */
export const NO_SANDBOX: ProbeFacts = { exists: false, running: false, expiry_known: true, expired: false };
