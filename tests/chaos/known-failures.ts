/**
 * Scenarios that fail today because of a platform defect outside the suite: the defect, and the
 * violation it shows as. The jest spec lets exactly that violation through (every other check
 * stays strict) and says so when it did not occur; remove the entry once the defect is fixed.
 * Keep this list short and current.
 */
export type KnownFailure = Readonly<{ defect: string; symptom: RegExp }>;

export const KNOWN_FAILURES: Readonly<Record<string, KnownFailure>> = {
  'clock skew: manager +2 h, kernel -5 min mid-turn; lease expiry': {
    defect:
      'turn-reconciler: with the kernel clock behind, a new turn looks silent at once; a probe during harness start-up gets "not delivered" and fails the turn input_not_delivered',
    symptom: /^the next message did not complete: TurnFailed \(input_not_delivered:/,
  },
};
