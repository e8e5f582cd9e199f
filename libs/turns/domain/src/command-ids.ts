import { digest64, SAFE_TOKEN } from '@berth/core';

/**
 * The id of the command that settles `turnId` at `generation` by `step`. Deterministic, so two
 * reconcilers (or one retrying after a crash) that reach the same conclusion send the same command,
 * which the broker's duplicate window and the kernel's processed-command check both drop.
 */
export function reconcileCommandId(turnId: string, generation: number, step: string): string {
  const readable = `cmd_rc_${turnId}_g${generation}_${step}`;
  if (SAFE_TOKEN.test(readable)) return readable;
  const key = `${turnId}|${generation}|${step}`;
  return `cmd_rc_${digest64(key)}_${step}`.slice(0, 128);
}
