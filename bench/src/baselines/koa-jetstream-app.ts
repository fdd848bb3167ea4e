/**
 * BASELINE: the service a team would write instead of Herald's offline path, as the koa and
 * nats.js documentation show it: koa with a router, the JSON body read and validated with zod,
 * one JetStream publish per event awaited for its ack, and 202 with the event's id. Figure 3
 * drives it with exactly the HTTP load Herald's `POST /notify` gets (the same body, the same
 * client), so the ratio compares two HTTP services doing the same job; the raw publish from the
 * load generator stays as the floor.
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import type { JetStreamClient } from 'nats';
import { z } from 'zod';
import { readBody } from './http-util.js';
import { KOA_STREAM, koaSubject } from './names.js';

/**
 * The body Herald's POST /notify takes, validated the way a zod user would write it: the payload
 * is any JSON value (JSON.parse already made it one), so only its presence is checked.
 */
export const NotifyBody = z.object({
  recipient: z.uuid(),
  payload: z.unknown().refine((v) => v !== undefined, 'payload is required'),
  api_key: z.string().min(1),
  client: z.enum(['web', 'mobile']),
});

/** The koa app: `GET /readyz`, and `POST /notify` publishing to `KOA_STREAM` then answering 202. */
export function koaJetStreamApp(js: JetStreamClient): Koa {
  const app = new Koa();
  const router = new Router();
  router.get('/readyz', (ctx) => {
    ctx.body = { ok: true };
  });
  router.post('/notify', async (ctx) => {
    let raw: unknown;
    try {
      raw = JSON.parse(await readBody(ctx.req));
    } catch {
      ctx.status = 400;
      ctx.body = { error: { code: 'invalid_json' } };
      return;
    }
    const parsed = NotifyBody.safeParse(raw);
    if (!parsed.success) {
      ctx.status = 400;
      ctx.body = { error: { code: 'invalid_body', message: parsed.error.issues[0]?.message } };
      return;
    }
    const id = randomUUID();
    await js.publish(koaSubject(parsed.data.recipient), JSON.stringify(parsed.data.payload), {
      msgID: id,
      expect: { streamName: KOA_STREAM },
    });
    ctx.status = 202;
    ctx.body = { status: 'User offline, notification saved', id };
  });
  app.use(router.routes());
  return app;
}
