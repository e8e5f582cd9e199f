import type { SealedSecret } from '@berth/contracts';

export interface SecretBox {
  seal(plaintext: string, aad: string): SealedSecret;
  /** Throws when the key is unknown or the value was tampered with or moved to another record. */
  open(sealed: SealedSecret, aad: string): string;
}
