import { z } from 'zod';
import { type ErrorCode, ErrorCodes, HeraldError } from './errors.js';

const CODES = Object.keys(ErrorCodes) as [ErrorCode, ...ErrorCode[]];

/**
 * The one envelope of a NATS reply that refuses or fails, on every subject a Herald service
 * answers for another (`rt.auth.verify`, `rt.statusapi.query`, `rt.statusapi.trim`):
 * `{"v":1,"ok":false,"error":{"code","message","field"?}}`. `error` is exactly what
 * `HeraldError.toBody()` and every HTTP error body carry, so the code crosses NATS and the caller
 * rebuilds the typed error ({@link errorOfReply}). The dispatch subjects (`rt.dispatch.*`), a
 * contract for the operator's own services, answer as HTTP does instead: the same `error`
 * object beside `http_status` (api.md).
 */
export const ErrorReply = z.object({
  v: z.literal(1),
  ok: z.literal(false),
  error: z.object({ code: z.enum(CODES), message: z.string(), field: z.string().optional() }),
});
export type ErrorReply = z.infer<typeof ErrorReply>;

/** The reply of a responder refusing or failing with `err`. */
export function errorReply(err: HeraldError): ErrorReply {
  return { v: 1, ok: false, error: err.toBody().error };
}

/** The typed error a reply carried. */
export function errorOfReply(reply: ErrorReply): HeraldError {
  return HeraldError.fromBody(reply.error);
}
