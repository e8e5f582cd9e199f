/**
 * Claude Code files a conversation under `~/.claude/projects/<key>/`, where the key is the cwd
 * with every non-alphanumeric character replaced by `-` (long paths are cut at 200 characters
 * and get a hash suffix). Resume only looks under the current cwd's key.
 */
export function claudeProjectKey(cwd: string): string {
  const key = cwd.normalize('NFC').replace(/[^a-zA-Z0-9]/g, '-');
  if (key.length <= 200) return key;
  return `${key.slice(0, 200)}-${djb2(cwd).toString(36)}`;
}

function djb2(text: string): number {
  let hash = 5381;
  for (let i = 0; i < text.length; i++) hash = ((hash << 5) + hash + text.charCodeAt(i)) | 0;
  return Math.abs(hash);
}
