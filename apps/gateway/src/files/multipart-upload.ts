import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { BerthError, ValidationError } from '@berth/core';
import busboy from 'busboy';

export const FILE_TOO_LARGE = 'FILE_TOO_LARGE';

export const fileTooLarge = (maxBytes: number): BerthError =>
  new BerthError(FILE_TOO_LARGE, 413, `the file is larger than this server's limit of ${maxBytes} bytes`, { max_bytes: maxBytes });

/** The `file` part as it arrives: its declared name and type, and its bytes (at most `maxBytes`, else the stream throws FILE_TOO_LARGE). */
export type UploadedPart = Readonly<{ filename: string | null; declaredType: string | null; content: AsyncIterable<Uint8Array> }>;

/** Room for the multipart framing and the small fields beside the file. */
const ENVELOPE_BYTES = 64 * 1024;

/**
 * Reads a `multipart/form-data` upload without holding it in memory: the `file` part is handed to
 * `store` as a stream (backpressure reaches the socket), the other fields are collected (small,
 * bounded). Resolves once the whole request was read, with what `store` returned and the fields.
 * A body that declares more than the limit is refused before anything is stored; one that turns
 * out larger fails its stream, so `store` writes nothing; the rest of the body is read and dropped
 * either way, so the client gets the 413 instead of a reset connection.
 */
export async function readUpload<T>(
  req: IncomingMessage,
  options: Readonly<{ maxBytes: number }>,
  store: (part: UploadedPart) => Promise<T>,
): Promise<{ stored: T; fields: Readonly<Record<string, string>> }> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(type)) {
    drain(req);
    throw new BerthError('UNSUPPORTED_MEDIA_TYPE', 415, 'upload a file as multipart/form-data with a `file` part');
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes + ENVELOPE_BYTES) {
    await drained(req);
    throw fileTooLarge(options.maxBytes);
  }

  let parser: busboy.Busboy;
  try {
    // busboy marks a part truncated when it reaches `fileSize`: one byte of room lets exactly `maxBytes` through.
    parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: options.maxBytes + 1, fields: 8, fieldSize: 1024, parts: 9 } });
  } catch (e) {
    drain(req);
    throw new ValidationError(`malformed multipart body: ${e instanceof Error ? e.message : String(e)}`, 'file');
  }

  const fields: Record<string, string> = {};
  let storing: Promise<T> | null = null;
  let refusal: BerthError | null = null;
  const finished = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) refusal ??= new ValidationError(`field ${name} is too long`, name);
      else fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file') {
        refusal ??= new ValidationError(`unexpected file part ${JSON.stringify(name)}: send the file as \`file\``, name);
        stream.resume();
        return;
      }
      storing = store({ filename: info.filename ?? null, declaredType: info.mimeType ?? null, content: limited(stream, options.maxBytes) });
      // Settled here so a refused store never becomes an unhandled rejection; awaited below.
      storing.catch(() => undefined);
    });
    parser.on('filesLimit', () => (refusal ??= new ValidationError('send exactly one file per upload', 'file')));
    parser.on('fieldsLimit', () => (refusal ??= new ValidationError('too many form fields', 'file')));
    parser.on('partsLimit', () => (refusal ??= new ValidationError('too many form parts', 'file')));
    parser.on('close', resolve);
    parser.on('error', (e: unknown) => reject(new ValidationError(`malformed multipart body: ${e instanceof Error ? e.message : String(e)}`, 'file')));
    req.on('aborted', () => reject(new BerthError('REQUEST_ABORTED', 400, 'the upload was aborted by the client')));
  });
  req.pipe(parser);
  try {
    await finished;
  } catch (e) {
    req.unpipe(parser);
    drain(req);
    await (storing as Promise<T> | null)?.catch(() => undefined);
    throw e;
  }
  if (storing === null) throw refusal ?? new ValidationError('the upload has no `file` part', 'file');
  const stored = await (storing as Promise<T>);
  if (refusal) throw refusal;
  return { stored, fields };
}

/**
 * The part's bytes; past `maxBytes` busboy truncates it and this throws, so nothing is kept. A
 * consumer that stops early (a failed write) leaves the rest to be drained, never a stalled parser.
 */
function limited(stream: Readable & { truncated?: boolean }, maxBytes: number): AsyncIterable<Uint8Array> {
  const through = new PassThrough();
  // Wired at once (the consumer may start later): a body cut off mid-part fails the copy, never hangs it.
  stream.on('error', (e) => through.destroy(e));
  // Its iterator reports the error to the consumer; this listener only keeps an early one from crashing the process.
  through.on('error', () => undefined);
  stream.pipe(through);
  return copy(stream, through, maxBytes);
}

async function* copy(stream: Readable & { truncated?: boolean }, through: PassThrough, maxBytes: number): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of through) yield chunk as Buffer;
  } finally {
    stream.unpipe(through);
    stream.resume();
  }
  if (stream.truncated) throw fileTooLarge(maxBytes);
}

const drain = (req: IncomingMessage): void => void req.resume();

const drained = (req: IncomingMessage): Promise<void> =>
  new Promise((resolve) => {
    if (req.readableEnded) return resolve();
    req.on('end', resolve);
    req.on('close', resolve);
    req.resume();
  });
