import { SAFE_TOKEN } from '@berth/core';

/** 32-bit FNV-1a; two seeds give a 64-bit digest, plenty to keep derived ids apart. */
const fnv1a = (text: string, seed: number): string => {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
};

/**
 * The id of the command that settles `turnId` at `generation` by `step`. Deterministic, so two
 * reconcilers (or one retrying after a crash) that reach the same conclusion send the same command,
 * which the broker's duplicate window and the kernel's processed-command check both drop.
 */
export function reconcileCommandId(turnId: string, generation: number, step: string): string {
  const readable = `cmd_rc_${turnId}_g${generation}_${step}`;
  if (SAFE_TOKEN.test(readable)) return readable;
  const key = `${turnId}|${generation}|${step}`;
  return `cmd_rc_${fnv1a(key, 0x811c9dc5)}${fnv1a(key, 0x050c5d1f)}_${step}`.slice(0, 128);
}
