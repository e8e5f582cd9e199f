import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { HarnessAdapter } from '@berth/harness';

/**
 * Copies a conversation's transcript files (as the adapter locates them) from one home to another,
 * keeping their paths relative to the home: what the platform does when it restores a mirrored
 * transcript into a brand-new sandbox. Returns the copied paths, relative to the home.
 */
export function copyTranscripts(adapter: HarnessAdapter, fromHome: string, toHome: string, cwd: string, sessionId: string): string[] {
  const copied: string[] = [];
  for (const location of adapter.transcriptLocations(fromHome, cwd, sessionId)) {
    for (const file of filesIn(location.dir, location.recursive)) {
      if (!file.endsWith(location.nameEndsWith)) continue;
      const rel = relative(fromHome, file);
      mkdirSync(dirname(join(toHome, rel)), { recursive: true });
      copyFileSync(file, join(toHome, rel));
      copied.push(rel);
    }
  }
  return copied;
}

function filesIn(dir: string, recursive: boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return recursive ? filesIn(path, true) : [];
    return [path];
  });
}
