import { Transform } from 'node:stream';

/** A pass-through that counts the bytes going by: what a blob put reports as the blob's size. */
export function byteCounter(): { stream: Transform; size: () => number } {
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, size: () => size };
}
