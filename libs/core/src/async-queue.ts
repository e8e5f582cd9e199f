/** A push-fed async iterable: producers `push`/`end`/`fail`, one consumer iterates. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiters: ((r: IteratorResult<T>) => void)[] = [];
  private failers: ((e: unknown) => void)[] = [];
  private done = false;
  private error: unknown = null;

  push(item: T): void {
    if (this.done) return;
    const waiter = this.waiters.shift();
    this.failers.shift();
    if (waiter) waiter({ value: item, done: false });
    else this.items.push(item);
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    for (const waiter of this.waiters) waiter({ value: undefined, done: true });
    this.waiters = [];
    this.failers = [];
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.error = error;
    this.done = true;
    for (const fail of this.failers) fail(error);
    this.waiters = [];
    this.failers = [];
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
        if (this.done) return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiters.push(resolve);
          this.failers.push(reject);
        });
      },
      return: () => {
        this.end();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/** Splits a byte stream into lines (without the newline); a trailing partial line is flushed at end. */
export class LineSplitter {
  private partial = '';
  constructor(private readonly onLine: (line: string) => void) {}

  write(chunk: Buffer | string): void {
    const text = this.partial + chunk.toString();
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  flush(): void {
    if (this.partial !== '') this.onLine(this.partial);
    this.partial = '';
  }
}
