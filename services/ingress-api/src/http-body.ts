import type { IncomingMessage } from 'node:http';
import { HeraldError } from '@herald/proto';
import getRawBody from 'raw-body';
import type { z } from 'zod';

/**
 * Checks that the request declares a JSON body Herald can read: `application/json`, UTF-8 (the
 * only encoding JSON allows between systems, RFC 8259), and not compressed.
 */
export function checkJsonRequest(
  contentType: string | undefined,
  contentEncoding: string | undefined,
): void {
  const [mime = '', ...params] = (contentType ?? '').split(';');
  if (mime.trim().toLowerCase() !== 'application/json') {
    throw new HeraldError(
      'unsupported_content_type',
      `Content-Type must be application/json${contentType ? `, got ${JSON.stringify(mime.trim())}` : ''}: send the body as JSON with Content-Type: application/json`,
      { field: 'Content-Type' },
    );
  }
  for (const param of params) {
    const [name = '', value = ''] = param.split('=');
    const charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
    if (name.trim().toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new HeraldError(
        'unsupported_content_type',
        'Content-Type charset must be utf-8: send the JSON body UTF-8 encoded',
        {
          field: 'Content-Type',
        },
      );
    }
  }
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') {
    throw new HeraldError(
      'unsupported_content_type',
      'Content-Encoding is not supported: send the body uncompressed',
      {
        field: 'Content-Encoding',
      },
    );
  }
}

/** Reads the whole body's bytes, refusing more than `limit` bytes before buffering them. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  let buffer: Buffer;
  try {
    buffer = await getRawBody(req, { length: req.headers['content-length'] ?? null, limit });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new HeraldError(
        'payload_too_large',
        `The body is larger than ${limit} bytes (PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES): send a smaller payload`,
        { field: 'body' },
      );
    }
    if (type === 'request.size.invalid') {
      throw new HeraldError(
        'invalid_json',
        'The body is shorter or longer than its Content-Length: resend it whole',
        {
          field: 'body',
        },
      );
    }
    if (type === 'request.aborted') {
      // The client went away: nobody reads this answer, but it is not a server bug either.
      throw new HeraldError(
        'invalid_json',
        'The request was aborted before its body arrived: resend it',
        {
          field: 'body',
        },
      );
    }
    throw err;
  }
  return buffer;
}

/**
 * Parses a JSON body read by {@link readJsonBody} against `schema`: `invalid_json` when it is not
 * JSON (showing `example`, the body to send), `missing_api_key` when `api_key` is absent, else
 * `invalid_field` naming the first field at fault.
 */
export function parseJsonBody<S extends z.ZodType>(
  schema: S,
  raw: string,
  example: string,
): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new HeraldError('invalid_json', `The body is not valid JSON: send ${example}`, {
      field: 'body',
    });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? 'body');
    throw new HeraldError(
      field === 'api_key' && json !== null && typeof json === 'object' && !('api_key' in json)
        ? 'missing_api_key'
        : 'invalid_field',
      `${field}: ${issue?.message ?? `bad value: send ${example}`}`,
      { field },
    );
  }
  return parsed.data;
}
