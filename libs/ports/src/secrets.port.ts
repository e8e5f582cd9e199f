/**
 * A secret encrypted at rest: AES-256-GCM under the server key named `key_id` (so keys can rotate:
 * old keys stay readable, new seals use the active one). Bound to `aad` (the record it belongs to),
 * so a sealed value copied onto another record does not open. Base64 fields.
 */
export type SealedSecret = Readonly<{ key_id: string; iv: string; ciphertext: string; tag: string }>;

export interface SecretBox {
  seal(plaintext: string, aad: string): SealedSecret;
  /** Throws when the key is unknown or the value was tampered with or moved to another record. */
  open(sealed: SealedSecret, aad: string): string;
}
