import type { SandboxRequest } from '@berth/sandbox-domain';

/** A session's current sandbox binding as the read side knows it (`sandboxId` = container name). */
export type BoundSandbox = Readonly<{ sessionId: string; generation: number; sandboxId: string; expiresAt: string | null }>;

/** Where the sandbox lifecycle reads which sessions hold which sandbox (the session read model). */
export interface SandboxBindings {
  listBound(): Promise<readonly BoundSandbox[]>;
}

/** Sessions asking for a sandbox generation not bound yet: one may be starting on another manager. */
export interface SandboxRequests {
  listRequested(): Promise<readonly SandboxRequest[]>;
}
