export { AesGcmSecretBox, parseSecretKeys, UnconfiguredSecretBox, type SecretKeyRing } from './secret-box';
export { secretBoxFromEnv } from './secret-box-config';
