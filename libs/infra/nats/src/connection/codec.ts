import { ValidationError } from '@berth/core';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeJson = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));

/** Malformed bytes are bad input (4xx), so a consumer terminates them instead of retrying. */
export function decodeJson(data: Uint8Array): unknown {
  const text = decoder.decode(data);
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError(`message body is not valid JSON (${text.length} bytes)`);
  }
}
