import type { CommandData } from '@berth/contracts';

/** The commands the reconciler sends the kernel; every one names the turn it settles. */
export type TurnCommand =
  | Readonly<{ type: 'RecoverTurn'; data: CommandData<'RecoverTurn'> }>
  | Readonly<{ type: 'FailTurn'; data: CommandData<'FailTurn'> }>
  | Readonly<{ type: 'MarkTranscriptPending'; data: CommandData<'MarkTranscriptPending'> }>;

/**
 * Send a command. `command_id` is derived from turn, generation and step, so a resend (or a second
 * reconciler reaching the same conclusion) is deduplicated by the broker and the kernel.
 */
export type SendCommand = Readonly<{ kind: 'command'; session_id: string; command_id: string; command: TurnCommand }>;

type EffectTarget = Readonly<{ session_id: string; turn_id: string; generation: number }>;

/** Work for the caller; each one's result comes back as an input (`observed` or `effect_result`). */
export type TurnEffect =
  | (EffectTarget & Readonly<{ effect: 'probe' }>)
  | (EffectTarget & Readonly<{ effect: 'reattach'; from_offset: number }>)
  | (EffectTarget & Readonly<{ effect: 'recoverOutput'; from_offset: number; through_offset: number | null }>)
  | (EffectTarget & Readonly<{ effect: 'restoreTranscriptAndResume'; transcript_bytes: number }>);
export type TurnEffectName = TurnEffect['effect'];

export type PerformEffect = Readonly<{ kind: 'effect' }> & TurnEffect;

export type TurnReconcileOutput = SendCommand | PerformEffect;
