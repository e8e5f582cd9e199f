/**
 * A secret encrypted at rest: AES-256-GCM under the server key named `key_id` (so keys can rotate:
 * old keys stay readable, new seals use the active one). Bound to the record it belongs to (the
 * additional authenticated data), so a sealed value copied onto another record does not open.
 * Base64 fields.
 */
export type SealedSecret = Readonly<{ key_id: string; iv: string; ciphertext: string; tag: string }>;

/**
 * What a session secret (a repository's `authorization_token`, kept under its resource id) is
 * sealed to: the session and the name, so a sealed token copied to another session or resource
 * does not open.
 */
export const sessionSecretAad = (sessionId: string, name: string): string => `session-secret:${sessionId}:${name}`;
