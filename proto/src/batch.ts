import { z } from 'zod';
import { NotifyAccepted, NotifyFailed, NotifyRefused } from './notify.js';

/**
 * One event's result in a batch: the body a single dispatch of that event would have answered,
 * plus the HTTP status it would have had, so a caller branches on one number per event.
 */
export const BatchItemResult = z.union([
  NotifyAccepted.extend({ http_status: z.number().int() }),
  NotifyFailed.extend({ http_status: z.number().int() }),
  NotifyRefused.extend({ http_status: z.number().int() }),
]);
export type BatchItemResult = z.infer<typeof BatchItemResult>;

/** The answer of `POST /notify/batch` (status 200): one result per event, in the events' order. */
export const BatchAccepted = z.object({ results: z.array(BatchItemResult) });
export type BatchAccepted = z.infer<typeof BatchAccepted>;

/**
 * The reply to a `rt.dispatch.batch.<account>` request: the HTTP body plus the HTTP status the
 * same call would have had (200 with results, or the whole request's refusal).
 */
export const BatchReply = z.union([
  BatchAccepted.extend({ http_status: z.literal(200) }),
  NotifyFailed.extend({ http_status: z.number().int() }),
  NotifyRefused.extend({ http_status: z.number().int() }),
]);
export type BatchReply = z.infer<typeof BatchReply>;
