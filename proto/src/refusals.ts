/**
 * Refusals (issue 45): what ingress refused for a key it could identify, so the dashboard's
 * Delivery page can show a key's recent refusals. Ingress aggregates them per key (identical
 * refusals within a flush interval are one record with a count) and publishes at most one
 * {@link RefusalBatch} per key per interval on `subjects.refusals(account)`, core NATS (outside
 * the status stream: refusals are a debugging aid and fire no webhook). The status service keeps
 * the last few per key. Never a payload, never a key: the key's id, the request's Origin (cut to
 * {@link REFUSAL_ORIGIN_MAX} characters), the route, and the error's code and field.
 */
import { z } from 'zod';

/** Most characters of a refused request's Origin kept; a longer one is cut. */
export const REFUSAL_ORIGIN_MAX = 200;
/** Most records one {@link RefusalBatch} carries (ingress's REFUSAL_KINDS_PER_KEY_MAX is below). */
export const REFUSAL_BATCH_RECORDS_MAX = 200;
/** Most refusals one dashboard query returns. */
export const REFUSALS_PAGE_MAX = 200;
/** The latest instant a JavaScript Date can hold, epoch ms. */
const MAX_DATE_MS = 8_640_000_000_000_000;

/** Text Postgres can store: no NUL character. */
const Text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain a NUL character');

const EpochMs = z.number().int().nonnegative().max(MAX_DATE_MS);

/** Identical refusals of one key (same status, code, field, origin, route) in one interval. */
export const RefusalRecord = z.object({
  /** The HTTP status answered (400..599). */
  status: z.number().int().min(400).max(599),
  /** The error code answered (proto/errors.ts). */
  code: Text(64).min(1),
  /** The field the error names, if any. */
  field: Text(128).nullable(),
  /** The request's Origin header, if any, cut to REFUSAL_ORIGIN_MAX characters. */
  origin: Text(REFUSAL_ORIGIN_MAX).nullable(),
  /** The route refused: `/notify`, `/notify/batch`, `/topics`, `/push/subscriptions`… */
  route: Text(64).min(1),
  /** How many identical refusals this record stands for. */
  count: z.number().int().min(1),
  first_at: EpochMs,
  last_at: EpochMs,
});
export type RefusalRecord = z.infer<typeof RefusalRecord>;

/** One key's refusals of one interval, published on `subjects.refusals(account_id)`. */
export const RefusalBatch = z.object({
  v: z.literal(1),
  account_id: z.string().min(1).max(64),
  key_id: Text(64).min(1),
  records: z.array(RefusalRecord).min(1).max(REFUSAL_BATCH_RECORDS_MAX),
});
export type RefusalBatch = z.infer<typeof RefusalBatch>;

/** A stored refusal as the status service answers it (times as ISO strings). */
export const RefusalView = z.object({
  status: z.number().int(),
  code: z.string(),
  field: z.string().nullable(),
  origin: z.string().nullable(),
  route: z.string(),
  count: z.number().int(),
  first_at: z.string(),
  last_at: z.string(),
});
export type RefusalView = z.infer<typeof RefusalView>;
