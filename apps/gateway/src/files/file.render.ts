import type { FileRecord } from '@berth/ports';

/** `BetaFileMetadata`. */
export const renderFile = (file: FileRecord) => ({
  type: 'file' as const,
  id: file.id,
  filename: file.filename,
  mime_type: file.mime_type,
  size_bytes: file.size_bytes,
  created_at: file.created_at,
  expires_at: file.expires_at,
  downloadable: file.downloadable,
  scope: file.scope,
});
