import { jsonBytes, PayloadLimits, type AgentOutput } from '@berth/contracts';

export type OutputBatch = Readonly<{ offset: number; outputs: readonly AgentOutput[] }>;

export type OutputBatcherOptions = Readonly<{
  /** Outputs already recorded by the kernel have offsets up to this (-1: none); they are skipped. */
  lastRecordedOffset: number;
  /** Offset of the first output (default 0): a turn continued by a new harness numbers on after the outputs its first one recorded. */
  firstOffset?: number;
  /** A batch holds at most this many outputs… */
  maxOutputs: number;
  /** …and stays under one command on the bus (default: under `PayloadLimits.commandBytes`). */
  maxBytes?: number;
  send: (batch: OutputBatch) => Promise<void>;
  onError: (error: unknown) => void;
}>;

/** Room left in a command for its other fields. */
const DEFAULT_MAX_BYTES = PayloadLimits.commandBytes - 4_096;

/**
 * Numbers a turn's outputs in file order (the offset the kernel dedupes by) and sends them in
 * batches, one at a time and in order: the kernel drops outputs at or below the last recorded
 * offset, so a later batch overtaking an earlier one would lose the earlier one. An output goes at
 * once when no batch is on its way; those that come while one is make the next batch, sent when it
 * is answered. So a lone output waits for nothing, and a burst costs a few commands, not one each.
 */
export class OutputBatcher {
  private nextOffset = 0;
  private pending: AgentOutput[] = [];
  private pendingOffset = 0;
  private pendingBytes = 0;
  /** Batches closed while another was on its way, in offset order. */
  private readonly queue: OutputBatch[] = [];
  private sending: Promise<void> | null = null;

  constructor(private readonly options: OutputBatcherOptions) {
    this.nextOffset = options.firstOffset ?? 0;
  }

  /** Offset of the last output seen (-1 before any). */
  get lastOffset(): number {
    return this.nextOffset - 1;
  }

  add(outputs: readonly AgentOutput[]): void {
    for (const output of outputs) {
      const offset = this.nextOffset++;
      if (offset <= this.options.lastRecordedOffset) continue;
      const size = jsonBytes(output) + 1;
      if (this.pending.length >= this.options.maxOutputs || (this.pending.length > 0 && this.pendingBytes + size > (this.options.maxBytes ?? DEFAULT_MAX_BYTES))) this.close();
      if (this.pending.length === 0) this.pendingOffset = offset;
      this.pending.push(output);
      this.pendingBytes += size;
    }
    if (this.sending === null && this.pending.length > 0) void this.flush();
  }

  /** Sends what waits; resolves when everything handed over so far was sent. */
  flush(): Promise<void> {
    this.close();
    if (this.sending === null && this.queue.length > 0) this.sending = Promise.resolve().then(() => this.drain());
    return this.sending ?? Promise.resolve();
  }

  private close(): void {
    if (this.pending.length === 0) return;
    this.queue.push({ offset: this.pendingOffset, outputs: this.pending });
    this.pending = [];
    this.pendingBytes = 0;
  }

  private async drain(): Promise<void> {
    try {
      for (let batch = this.queue.shift(); batch !== undefined; batch = this.next()) {
        await this.options.send(batch).catch(this.options.onError);
      }
    } finally {
      this.sending = null;
    }
  }

  /** The next batch to send: one closed already, else what came meanwhile. */
  private next(): OutputBatch | undefined {
    if (this.queue.length === 0) this.close();
    return this.queue.shift();
  }
}
