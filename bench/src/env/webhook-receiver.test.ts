import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkSignature,
  startWebhookReceiver,
  type WebhookArrival,
  type WebhookReceiver,
} from './webhook-receiver.js';

const secretBytes = randomBytes(32);
const secret = `whsec_${secretBytes.toString('base64')}`;

/** The Standard Webhooks headers of a body, signed as the spec says (base64 HMAC-SHA256 of id.ts.body). */
function signed(id: string, body: string, key = secretBytes): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` };
}

describe('the webhook receiver, over real TLS with its own CA', () => {
  let receiver: WebhookReceiver;
  const arrivals: WebhookArrival[] = [];
  const send = (body: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        receiver.url,
        {
          method: 'POST',
          ca: readFileSync(receiver.caFile),
          headers: { 'content-type': 'application/json', ...headers },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    receiver.addSecret(secret);
    receiver.onArrival = (a) => arrivals.push(a);
  });
  afterAll(() => receiver?.stop());

  it('answers 204 to a signed message and hands on its id, type and event', async () => {
    const body = JSON.stringify({ type: 'event.queued', timestamp: 'x', data: { id: 'e1' } });
    expect(await send(body, signed('e1:event.queued', body))).toBe(204);
    expect(arrivals.at(-1)).toMatchObject({
      messageId: 'e1:event.queued',
      type: 'event.queued',
      eventId: 'e1',
    });
  });

  it('accepts a rotation header whose second signature is the one it trusts', async () => {
    const body = JSON.stringify({ type: 'event.sent', data: { id: 'e2' } });
    const h = signed('e2:event.sent', body);
    const other = signed('e2:event.sent', body, randomBytes(32));
    h['webhook-signature'] = `${other['webhook-signature']} ${h['webhook-signature']}`;
    expect(await send(body, h)).toBe(204);
  });

  it('refuses (400, counted) a bad signature, missing headers, and a body without data.id', async () => {
    const before = receiver.refused;
    const body = JSON.stringify({ type: 'event.sent', data: { id: 'e3' } });
    expect(await send(body, signed('e3:event.sent', body, randomBytes(32)))).toBe(400);
    expect(await send(body, {})).toBe(400);
    const noId = JSON.stringify({ type: 'event.sent', data: {} });
    expect(await send(noId, signed('e4', noId))).toBe(400);
    expect(receiver.refused - before).toBe(3);
    expect(receiver.firstRefusal).toBe('no v1 signature matches a trusted secret');
    expect(arrivals.map((a) => a.eventId)).not.toContain('e3');
  });
});

describe('checkSignature', () => {
  it('names what is wrong', () => {
    const body = '{}';
    const good = signed('m', body);
    expect(checkSignature(good, body, [secretBytes])).toBeUndefined();
    expect(checkSignature(good, `${body} `, [secretBytes])).toMatch(/no v1 signature/);
    expect(checkSignature({ ...good, 'webhook-timestamp': 'soon' }, body, [secretBytes])).toMatch(
      /not unix seconds/,
    );
    expect(checkSignature({ 'webhook-id': 'm' }, body, [secretBytes])).toMatch(
      /without webhook-id/,
    );
    expect(checkSignature(good, body, [])).toMatch(/no v1 signature/);
  });
});
