/** What `berth` exits with, so scripts can branch on the kind of failure. */
export const ExitCode = {
  ok: 0,
  apiError: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  connection: 5,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Bad command line: unknown command or option, missing argument. */
export class UsageError extends Error {}

/** The API answered with an error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** A command that ran and found something wrong: its report is printed as usual, and berth exits 1. */
export class ReportedFailure extends Error {
  constructor(readonly output: Readonly<{ json: unknown; human: string }>) {
    super('the command reported a failure');
  }
}

/** No credentials to even try with (a refused key comes back as an ApiError 401). */
export class MissingKeyError extends Error {}

/** The API could not be reached (refused, reset, DNS, timeout). */
export class ConnectionError extends Error {}

export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return ExitCode.usage;
  if (error instanceof ConnectionError) return ExitCode.connection;
  if (error instanceof MissingKeyError) return ExitCode.auth;
  if (error instanceof ApiError) {
    if (error.status === 401 || error.status === 403) return ExitCode.auth;
    if (error.status === 404) return ExitCode.notFound;
    return ExitCode.apiError;
  }
  return ExitCode.apiError;
}
