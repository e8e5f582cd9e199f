import { jsonBytes, PayloadLimits, type AgentOutput } from '@berth/contracts';

export type OutputBatch = Readonly<{ offset: number; outputs: readonly AgentOutput[] }>;

export type OutputBatcherOptions = Readonly<{
  /** Outputs already recorded by the kernel have offsets up to this (-1: none); they are skipped. */
  lastRecordedOffset: number;
  /** Offset of the first output (default 0): a turn continued by a new harness numbers on after the outputs its first one recorded. */
  firstOffset?: number;
  /** Flush once this many outputs wait. */
  maxOutputs: number;
  /** …or before the batch would outgrow one command on the bus (default: under `PayloadLimits.commandBytes`). */
  maxBytes?: number;
  /** …or this long after the first one arrived. */
  delayMs: number;
  send: (batch: OutputBatch) => Promise<void>;
  onError: (error: unknown) => void;
}>;

/** Room left in a command for its other fields. */
const DEFAULT_MAX_BYTES = PayloadLimits.commandBytes - 4_096;

/**
 * Numbers a turn's outputs in file order (the offset the kernel dedupes by) and sends them in
 * batches, one at a time and in order: the kernel drops outputs at or below the last recorded
 * offset, so a later batch overtaking an earlier one would lose the earlier one.
 */
export class OutputBatcher {
  private nextOffset = 0;
  private pending: AgentOutput[] = [];
  private pendingOffset = 0;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

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
      if (this.pending.length > 0 && this.pendingBytes + size > (this.options.maxBytes ?? DEFAULT_MAX_BYTES)) this.flush();
      if (this.pending.length === 0) this.pendingOffset = offset;
      this.pending.push(output);
      this.pendingBytes += size;
    }
    if (this.pending.length >= this.options.maxOutputs) this.flush();
    else if (this.pending.length > 0 && this.timer === null) this.timer = setTimeout(() => this.flush(), this.options.delayMs);
  }

  /** Sends what waits; resolves when everything handed over so far was sent. */
  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length > 0) {
      const batch: OutputBatch = { offset: this.pendingOffset, outputs: this.pending };
      this.pending = [];
      this.pendingBytes = 0;
      this.chain = this.chain.then(() => this.options.send(batch)).catch(this.options.onError);
    }
    return this.chain;
  }
}
