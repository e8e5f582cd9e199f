/**
 * Scenarios that fail today because of a platform defect outside the suite: the defect, and the
 * violation it shows as. The jest spec lets exactly that violation through (every other check
 * stays strict) and says so when it did not occur; remove the entry once the defect is fixed.
 * Keep this list short and current.
 */
export type KnownFailure = Readonly<{ defect: string; symptom: RegExp }>;

const resumeWithoutTranscript: KnownFailure = {
  defect:
    'sandbox-manager: after a mid-turn sandbox loss with no transcript mirrored, the next message resumes the harness session anyway',
  symptom: /^the next message did not complete: TurnFailed \(model_error: No conversation found with session ID/,
};

export const KNOWN_FAILURES: Readonly<Record<string, KnownFailure>> = {
  'docker kill of the sandbox mid-turn, before any transcript mirror': resumeWithoutTranscript,
  'docker kill of the sandbox mid-turn, after a transcript mirror': {
    defect: 'sandbox-manager: transcripts are mirrored only when output arrives, so none is mirrored during a silent tool step',
    symptom: /^no transcript was mirrored while the turn ran/,
  },
  'clock skew: manager +2 h, kernel -5 min mid-turn; lease expiry': {
    defect:
      'turn-reconciler: with the kernel clock behind, a new turn looks silent at once; a probe during harness start-up gets "not delivered" and fails the turn input_not_delivered',
    symptom: /^the next message did not complete: TurnFailed \(input_not_delivered:/,
  },
};
