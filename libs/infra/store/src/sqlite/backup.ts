import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/** Copies every page in one step: a step is one read transaction, so a writer never makes the copy restart or tear. */
const ALL_PAGES = 0x7fffffff;

export type BackupResult = Readonly<{ path: string; bytes: number; pages: number }>;

/**
 * A consistent copy of a SQLite store while the platform runs, through SQLite's online backup API.
 * WAL mode lets the services keep committing meanwhile; the copy holds what was committed when its
 * step began (the WAL's committed frames included), is checked with `PRAGMA quick_check`, and only
 * then appears under `destination` (written beside it, then renamed).
 */
export async function backupSqlite(source: string, destination: string): Promise<BackupResult> {
  if (existsSync(destination)) throw new Error(`${destination} already exists; choose a new file for the backup`);
  const partial = `${destination}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(source, { fileMustExist: true });
  try {
    const { totalPages } = await db.backup(partial, { progress: () => ALL_PAGES });
    const copy = new Database(partial, { readonly: true });
    try {
      const verdict = copy.pragma('quick_check', { simple: true });
      if (verdict !== 'ok') throw new Error(`the copy failed SQLite's quick_check: ${String(verdict)}`);
    } finally {
      copy.close();
    }
    renameSync(partial, destination);
    return { path: destination, bytes: statSync(destination).size, pages: totalPages };
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    db.close();
  }
}
