/** One delivery as a handler sees it: decoded body, headers, and where it stands in redelivery. */
export type InboundMessage = Readonly<{
  subject: string;
  body: unknown;
  headers: Readonly<Record<string, string>>;
  /** 1 on first delivery. */
  deliveryCount: number;
  streamSeq: number;
  redelivered: boolean;
  /** Extends the ack deadline during long work. */
  working(): void;
}>;

/** A message that will not be processed: its copy on the dead-letter subject and why. */
export type DeadLetter = Readonly<{
  subject: string;
  deadLetterSubject: string;
  /** The decoded body, or null when it was not valid JSON. */
  body: unknown;
  headers: Readonly<Record<string, string>>;
  reason: string;
  deliveryCount: number;
  streamSeq: number;
}>;
