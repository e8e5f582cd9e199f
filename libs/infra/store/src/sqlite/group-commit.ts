import type { SqliteDb } from './sqlite-db';

type Pending<T> = { item: T; resolve: () => void; reject: (error: unknown) => void };

/**
 * Group commit: writes submitted during one event-loop turn share ONE SQLite transaction (one WAL
 * commit, one fsync under synchronous=FULL) instead of one each, in submission order. When any
 * write throws (e.g. a `ConcurrencyError`), the whole group is rolled back and written again with
 * a savepoint per write, so the failing one is rolled back alone and rejected with its error while
 * the others still commit. No promise resolves before its COMMIT has returned; if a COMMIT itself
 * fails, every write it held is rejected.
 */
export class GroupCommit<T> {
  private pending: Pending<T>[] = [];

  constructor(
    private readonly db: SqliteDb,
    private readonly writeOne: (item: T) => void,
  ) {}

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // setImmediate runs after this turn's I/O callbacks, so commands decoded together commit together.
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const group = this.pending;
    this.pending = [];
    try {
      this.db.write(() => {
        for (const pending of group) this.writeOne(pending.item);
      });
    } catch {
      this.writeEachInSavepoint(group);
      return;
    }
    for (const pending of group) pending.resolve();
  }

  private writeEachInSavepoint(group: readonly Pending<T>[]): void {
    const failures = new Map<Pending<T>, unknown>();
    try {
      this.db.write(() => {
        for (const pending of group) {
          try {
            this.db.savepoint(() => this.writeOne(pending.item));
          } catch (error) {
            failures.set(pending, error);
          }
        }
      });
    } catch (error) {
      for (const pending of group) pending.reject(error);
      return;
    }
    for (const pending of group) {
      if (failures.has(pending)) pending.reject(failures.get(pending));
      else pending.resolve();
    }
  }
}
