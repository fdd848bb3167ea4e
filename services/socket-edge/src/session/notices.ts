import { JSONCodec } from 'nats';
import type { z } from 'zod';

const json = JSONCodec();

/** A core-NATS notice's body checked with its schema; undefined when it is not one. */
export function decodeNotice<T extends z.ZodType>(
  schema: T,
  data: Uint8Array,
): z.infer<T> | undefined {
  let body: unknown;
  try {
    body = json.decode(data);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}
