/**
 * Structured fields of a log line. Ids use the names the API uses (`session_id`, `turn_id`,
 * `command_id`, `sandbox_id`); an error goes under `err`. Never put a secret in a field: the
 * adapter scrubs known secret values and key shapes, but the first line of defence is not to log them.
 */
export type LogFields = Readonly<Record<string, unknown>>;

/** The one logging port: services and their application code log through it, never through a framework. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose every line also carries `fields` (e.g. the session and turn it is about). */
  child(fields: LogFields): Logger;
}
