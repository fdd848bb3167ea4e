import { post } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { connect, newTenant, rawBody, recipient, type Tenant, useStack } from './fixtures.js';

// Payloads as raw JSON text: ingress must forward the sender's text untouched, so numbers beyond
// double precision and unusual formatting survive byte for byte.
const PAYLOADS: Array<[string, string]> = [
  ['object', '{"title":"Order shipped","order":42,"ok":true,"none":null}'],
  ['array', '[1,"two",{"three":[3]},null,false]'],
  ['nested', '{"a":{"b":{"c":{"d":[{"e":{"f":"deep"}}]}}},"custom-key with space":1}'],
  ['unicode', '{"msg":"héllo wörld 🎉 日本語 עברית","escaped":"\\u00e9\\ud83d\\ude00"}'],
  [
    'large numbers',
    '{"big":123456789012345678901234567890,"neg":-98765432109876543210,"exp":1.5e+300,"tiny":1e-320,"dec":1.50}',
  ],
  ['quotes', '{"q":"she said \\"hi\\" and \'bye\'","backslash":"C:\\\\path\\\\x","tab":"a\\tb"}'],
  ['string', '"just a string"'],
  ['number', '12345678901234567890'],
];

describe('online delivery', () => {
  const stack = useStack();

  it.each(PAYLOADS)(
    'pushes a %s payload, identical, to every socket of the recipient and to no other',
    async (_name, payloadJson) => {
      const s = stack();
      const tenant: Tenant = await newTenant(s);
      const to = recipient();
      const other = recipient();
      const tab1 = await connect(s, { apiKey: tenant.key.key, recipient: to });
      const tab2 = await connect(s, { apiKey: tenant.key.key, recipient: to });
      const v1 = await connect(s, { apiKey: tenant.key.key, recipient: to, v1: true });
      const bystander = await connect(s, { apiKey: tenant.key.key, recipient: other });

      const res = await post(s.baseUrl, s.ca, undefined, {
        raw: rawBody({ recipient: to, apiKey: tenant.key.key, payloadJson }),
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'sent', id: expect.any(String) });

      const [f1] = await tab1.waitForFrames(1);
      const [f2] = await tab2.waitForFrames(1);
      expect(f1?.text).toBe(payloadJson);
      expect(f2?.text).toBe(payloadJson);
      const [env] = await v1.waitForFrames(1);
      expect(env?.envelope).toMatchObject({
        type: 'event',
        id: res.body.id,
        ts: expect.any(Number),
      });
      expect(env?.text).toContain(`"payload":${payloadJson}}`);

      // A marker sent to the bystander after the event: if the event had leaked to it, it would
      // have arrived first (NATS keeps per-publisher order).
      const marker = await post(s.baseUrl, s.ca, undefined, {
        raw: rawBody({ recipient: other, apiKey: tenant.key.key, payloadJson: '{"marker":true}' }),
      });
      expect(marker.status).toBe(200);
      const [first] = await bystander.waitForFrames(1);
      expect(first?.text).toBe('{"marker":true}');
      expect(tab1.frames).toHaveLength(1);
      await Promise.all([tab1.close(), tab2.close(), v1.close(), bystander.close()]);
    },
  );

  it('accepts the recipient in upper case and delivers to the lower-case socket', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const sock = await connect(s, { apiKey: tenant.key.key, recipient: to.toUpperCase() });
    const res = await post(s.baseUrl, s.ca, {
      recipient: to.toUpperCase(),
      payload: { x: 1 },
      api_key: tenant.key.key,
      client: 'mobile',
    });
    expect(res.status).toBe(200);
    const [f] = await sock.waitForFrames(1);
    expect(JSON.parse(f?.text ?? '')).toEqual({ x: 1 });
    await sock.close();
  });
});
