import {
  parseWith,
  SandboxManagerQueries,
  Subjects,
  TurnEffectReplySchema,
  TurnProbeReplySchema,
  type SandboxManagerQuery,
  type TranscriptRestoreRequest,
  type TurnEffectReply,
  type TurnOutputRecoveryRequest,
  type TurnProbeReply,
  type TurnProbeRequest,
  type TurnReattachRequest,
} from '@berth/contracts';
import { decodeJson, encodeJson } from '@berth/nats';
import { PermissionViolationError, RequestError, TimeoutError, type NatsConnection } from '@nats-io/nats-core';
import type { z } from 'zod';
import { SandboxManagerUnanswered, type SandboxManagerClient } from '../reconciling/sandbox-manager.port';

export type NatsSandboxManagerClientOptions = Readonly<{
  /** Probes must be quick (an inspect and a file stat); a missing answer is a failed attempt. */
  probeTimeoutMs: number;
  /** Recovering output or restoring a transcript copies files: give them longer. */
  effectTimeoutMs: number;
}>;

/**
 * Core-NATS request/reply to the sandbox-manager on `berth.query.sandbox-manager.<name>`. No
 * responder or a timeout rejects with `SandboxManagerUnanswered`; a malformed reply with the
 * contract's error.
 */
export class NatsSandboxManagerClient implements SandboxManagerClient {
  constructor(
    private readonly nc: NatsConnection,
    private readonly options: NatsSandboxManagerClientOptions,
  ) {}

  probe(request: TurnProbeRequest): Promise<TurnProbeReply> {
    return this.ask(SandboxManagerQueries.probe, request, TurnProbeReplySchema, this.options.probeTimeoutMs);
  }

  reattach(request: TurnReattachRequest): Promise<TurnEffectReply> {
    return this.ask(SandboxManagerQueries.reattachTurn, request, TurnEffectReplySchema, this.options.probeTimeoutMs);
  }

  recoverOutput(request: TurnOutputRecoveryRequest): Promise<TurnEffectReply> {
    return this.ask(SandboxManagerQueries.recoverTurnOutput, request, TurnEffectReplySchema, this.options.effectTimeoutMs);
  }

  restoreTranscript(request: TranscriptRestoreRequest): Promise<TurnEffectReply> {
    return this.ask(SandboxManagerQueries.restoreTranscript, request, TurnEffectReplySchema, this.options.effectTimeoutMs);
  }

  private async ask<S extends z.ZodType>(name: SandboxManagerQuery, request: object, schema: S, timeout: number): Promise<z.infer<S>> {
    const reply = await this.nc.request(Subjects.query('sandbox-manager', name), encodeJson(request), { timeout }).catch((error: unknown) => {
      // A refused subject is a configuration error, not a manager that is away: it fails as any error does.
      const unanswered = error instanceof TimeoutError || (error instanceof RequestError && !(error.cause instanceof PermissionViolationError));
      if (unanswered) throw new SandboxManagerUnanswered(`no sandbox-manager answered ${name}: ${error.message}`, { cause: error });
      throw error;
    });
    return parseWith(schema, decodeJson(reply.data), `sandbox-manager ${name} reply`);
  }
}
