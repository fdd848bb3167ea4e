import { HeraldError } from '@herald/proto';
import type { Context } from 'koa';
import type { z } from 'zod';

/**
 * Reads the request body as JSON, refusing a non-JSON Content-Type (415 would be more precise,
 * but the contract gives it 400 `unsupported_content_type`) and more than `limit` bytes (413),
 * counting bytes as they arrive rather than trusting Content-Length.
 */
export async function readJson(ctx: Context, limit: number): Promise<unknown> {
  const type = ctx.get('Content-Type');
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HeraldError(
      'unsupported_content_type',
      'Content-Type must be application/json: send the body as JSON',
      { field: 'Content-Type' },
    );
  }
  const declared = Number(ctx.get('Content-Length') || '0');
  if (declared > limit) throw tooLarge(ctx, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw tooLarge(ctx, limit);
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new HeraldError('invalid_json', 'The body is not valid JSON: send a JSON object', {
      field: 'body',
    });
  }
}

/**
 * Validates a body with a zod schema, or throws the {@link HeraldError} naming the first field at
 * fault: `missing_field` when it is absent, `invalid_field` otherwise.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HeraldError('invalid_json', 'The body must be a JSON object', { field: 'body' });
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') || 'body';
  const top = issue?.path[0];
  const absent = typeof top === 'string' && (body as Record<string, unknown>)[top] === undefined;
  if (issue?.code === 'unrecognized_keys') {
    throw new HeraldError(
      'invalid_field',
      `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}: remove it (check its spelling)`,
      { field: issue.keys[0] ?? 'body' },
    );
  }
  throw new HeraldError(
    absent ? 'missing_field' : 'invalid_field',
    issue?.message ?? `${field} is invalid`,
    {
      field,
    },
  );
}

function tooLarge(ctx: Context, limit: number): HeraldError {
  // The rest of an oversized body is not worth reading just to keep the connection alive.
  ctx.set('Connection', 'close');
  return new HeraldError(
    'payload_too_large',
    `The body is larger than ${limit} bytes (ACCOUNT_API_BODY_LIMIT_BYTES): send a smaller one`,
    { field: 'body' },
  );
}
