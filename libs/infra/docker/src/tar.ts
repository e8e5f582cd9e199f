/**
 * The tar operations the engine's APIs need: pack files (archive upload, build context), and read
 * the first regular file out of an archive. Enough of ustar (+ pax/GNU long names skipped) for Docker's getArchive output.
 */
const BLOCK = 512;

function writeString(header: Buffer, value: string, offset: number, length: number): void {
  header.write(value, offset, Math.min(Buffer.byteLength(value), length), 'utf8');
}

function writeOctal(header: Buffer, value: number, offset: number, length: number): void {
  writeString(header, value.toString(8).padStart(length - 1, '0') + '\0', offset, length);
}

export type TarFile = Readonly<{ name: string; data: Buffer; mode?: number; uid?: number; gid?: number; mtime?: Date }>;

/** One file as an archive. */
export const packFile = (file: TarFile): Buffer => packFiles([file]);

/** Several files (names may hold `/`: a build context with a directory) as one archive. */
export function packFiles(files: readonly TarFile[]): Buffer {
  return Buffer.concat([...files.map(entry), Buffer.alloc(BLOCK * 2, 0)]);
}

function entry(file: TarFile): Buffer {
  if (Buffer.byteLength(file.name) > 100) throw new Error(`tar entry name too long: ${file.name}`);
  const header = Buffer.alloc(BLOCK, 0);
  writeString(header, file.name, 0, 100);
  writeOctal(header, file.mode ?? 0o644, 100, 8);
  writeOctal(header, file.uid ?? 0, 108, 8);
  writeOctal(header, file.gid ?? 0, 116, 8);
  writeOctal(header, file.data.length, 124, 12);
  writeOctal(header, Math.floor((file.mtime ?? new Date(0)).getTime() / 1000), 136, 12);
  header.fill(' ', 148, 156);
  header.write('0', 156);
  writeString(header, 'ustar\0', 257, 6);
  writeString(header, '00', 263, 2);
  let sum = 0;
  for (const byte of header) sum += byte;
  writeString(header, sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
  const padding = Buffer.alloc((BLOCK - (file.data.length % BLOCK)) % BLOCK, 0);
  return Buffer.concat([header, file.data, padding]);
}

function readNumber(field: Buffer): number {
  // GNU base-256 for sizes over 8 GiB: high bit set on the first byte.
  if (field[0] & 0x80) {
    let value = 0;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i];
    return value;
  }
  const text = field.toString('ascii').replace(/\0.*$/s, '').trim();
  return text === '' ? 0 : parseInt(text, 8);
}

/** The first regular file in `archive`, or null when there is none (a directory, a link…). */
export function firstFile(archive: Buffer): Buffer | null {
  let offset = 0;
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) return null;
    const size = readNumber(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] || 0x30);
    const start = offset + BLOCK;
    if (type === '0' || type === '\0' || type === '7') return Buffer.from(archive.subarray(start, start + size));
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return null;
}
