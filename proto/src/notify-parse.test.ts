import { describe, expect, it } from 'vitest';
import { NotifyRequest, parseNotifyRequest } from './notify.js';

describe('parseNotifyRequest', () => {
  it('returns what the NotifyRequest schema returns for every valid body', () => {
    const bodies = [
      {
        recipient: '0b6c3f1e-8a0d-4c1e-9f7a-2f4d5e6a7b8c',
        payload: { a: 1 },
        api_key: 'hk_live_abc',
        client: 'web',
      },
      {
        recipient: '0B6C3F1E-8A0D-4C1E-BF7A-2F4D5E6A7B8C',
        payload: null,
        api_key: 'hk_test_A-b_9',
        client: 'mobile',
        extra: 'dropped',
      },
      {
        recipient: '0b6c3f1e-8a0d-4c1e-8f7a-2f4d5e6a7b8c',
        payload: [1, 'two'],
        api_key: 'hk_dash_x',
        client: 'web',
      },
    ];
    for (const body of bodies) {
      expect(parseNotifyRequest(body)).toStrictEqual(NotifyRequest.parse(body));
    }
  });

  it('still names the field at fault when the shape is not the valid one', () => {
    const valid = {
      recipient: '0b6c3f1e-8a0d-4c1e-9f7a-2f4d5e6a7b8c',
      payload: 1,
      api_key: 'hk_live_abc',
      client: 'web',
    };
    expect(() =>
      parseNotifyRequest({ ...valid, recipient: '0b6c3f1e-8a0d-3c1e-9f7a-2f4d5e6a7b8c' }),
    ).toThrow(expect.objectContaining({ code: 'invalid_recipient' }));
    expect(() => parseNotifyRequest({ ...valid, client: 'WEB' })).toThrow(
      expect.objectContaining({ code: 'invalid_client' }),
    );
    expect(() => parseNotifyRequest({ ...valid, api_key: 'hk_prod_abc' })).toThrow(
      expect.objectContaining({ code: 'invalid_api_key' }),
    );
    expect(() => parseNotifyRequest({ ...valid, api_key: 7 })).toThrow(
      expect.objectContaining({ code: 'invalid_api_key' }),
    );
  });
});
