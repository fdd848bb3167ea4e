import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, secretBytes } from './secrets.js';
import { signedHeaders } from './signing.js';

describe('Standard Webhooks signing', () => {
  it('signs exactly as the reference library does, and verifies with it', () => {
    const secret = newWebhookSecret();
    const body = '{"type":"event.sent","timestamp":"2026-11-28T12:00:00.000Z","data":{"id":"é"}}';
    const ts = 1_795_000_000;
    const h = signedHeaders('ev-1:event.sent', ts, body, [secretBytes(secret)]);
    const reference = new Webhook(secret).sign('ev-1:event.sent', new Date(ts * 1000), body);
    expect(h['webhook-signature']).toBe(reference);
    expect(h['webhook-id']).toBe('ev-1:event.sent');
    expect(h['webhook-timestamp']).toBe(String(ts));
  });

  it('lists one v1 signature per key, space-separated, each verifying alone', () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    const now = Math.floor(Date.now() / 1000);
    const h = signedHeaders('test:1', now, '{}', [secretBytes(a), secretBytes(b)]);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(a).verify('{}', h)).toEqual({});
    expect(new Webhook(b).verify('{}', h)).toEqual({});
    expect(() => new Webhook(newWebhookSecret()).verify('{}', h)).toThrow();
  });

  it('makes secrets of 32 random bytes in the whsec_ form', () => {
    const s = newWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretBytes(s)).toHaveLength(32);
    expect(secretBytes(`whsec_${randomBytes(32).toString('base64')}`)).toHaveLength(32);
  });
});
