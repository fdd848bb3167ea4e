import { HeraldError } from '@herald/proto';
import type { NatsConnection } from 'nats';
import type { z } from 'zod';
import { findAccount } from '../accounts.js';
import { noAccount } from '../keys/store.js';
import type { AdminContext } from './context.js';

/** The account's id, once auth's database has it (the status service knows no accounts). */
export async function existingAccount(ctx: AdminContext, id: string): Promise<string> {
  const account = await findAccount(ctx.db(), id);
  if (!account) throw noAccount(id);
  return account.id;
}

/**
 * One request of a command to the status service (webhook endpoints, push) over the command's
 * NATS connection, its timeout read from the environment by `timeout` (its variable's name in the
 * error). No answer (nor NATS) is not a refusal of the arguments: it fails with exit 1, saying the
 * status service is unavailable; a refusal keeps its code and field.
 */
export async function askStatus<C, T>(
  ctx: AdminContext,
  timeout: { variable: string; schema: z.ZodType<number> },
  client: (nc: NatsConnection, timeoutMs: number) => C,
  call: (client: C) => Promise<T>,
): Promise<T> {
  const timeoutMs = timeout.schema.safeParse(ctx.env[timeout.variable]);
  if (!timeoutMs.success) {
    throw new Error(`${timeout.variable} ${timeoutMs.error.issues[0]?.message ?? 'is invalid'}`);
  }
  let nc: NatsConnection;
  try {
    nc = await ctx.nats();
  } catch (err) {
    throw new Error(
      `status service unavailable: NATS, which it is asked over, is unreachable (${err instanceof Error ? err.message : String(err)}): check NATS_URL`,
    );
  }
  try {
    return await call(client(nc, timeoutMs.data));
  } catch (err) {
    if (err instanceof HeraldError && err.code === 'unavailable') throw new Error(err.message);
    throw err;
  }
}
