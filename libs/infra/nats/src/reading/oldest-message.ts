import { BerthError, ErrorCodes } from '@berth/core';
import type { NatsConnection } from '@nats-io/nats-core';
import { decodeJson, encodeJson } from '../connection/codec';
import { JsApi } from '../auth/permissions';

const NO_MESSAGE = 10037;

type MsgGetReply = { message?: { seq?: unknown }; error?: { code?: number; err_code?: number; description?: string } };

/**
 * The stream sequence of the oldest message stored on `subject` (wildcards allowed), null when none
 * is. On a work-queue stream an acked message is gone, so this is the oldest one not yet done.
 * One `STREAM.MSG.GET` with `next_by_subj` from seq 1 (nats-server 2.9+; the client library types
 * only the by-seq and last-by-subject forms, so the request is made here).
 */
export async function oldestMessageSeq(nc: NatsConnection, stream: string, subject: string, timeoutMs = 5_000): Promise<number | null> {
  const reply = decodeJson((await nc.request(JsApi.msgGet(stream), encodeJson({ seq: 1, next_by_subj: subject }), { timeout: timeoutMs })).data) as MsgGetReply;
  if (reply.error?.err_code === NO_MESSAGE) return null;
  if (reply.error !== undefined) throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `${stream}: cannot read the oldest message on ${subject}: ${reply.error.description ?? 'unknown error'}`);
  const seq = reply.message?.seq;
  if (typeof seq !== 'number') throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `${stream}: the oldest message on ${subject} came back without a sequence`);
  return seq;
}
