export { AesGcmSecretBox, parseSecretKeys, UnconfiguredSecretBox, type SecretKeyRing } from './secret-box';
export { secretBoxFromEnv } from './secret-box-config';
export {
  createCertificateAuthority,
  issueServerCertificate,
  loadCertificateAuthority,
  loadOrCreateCertificateAuthority,
  type CertificateAuthority,
  type KeyAndCertificate,
} from './certificate-authority';
