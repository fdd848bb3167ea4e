import { describe, expect, it } from 'vitest';
import {
  ApnsKey,
  DeviceToken,
  FcmServiceAccount,
  PUSH_DEVICE_TOKEN_MAX,
  PUSH_PRIVATE_KEY_PEM_MAX,
  PushRequest,
} from './push.js';

const PEM = '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n';

describe('device tokens', () => {
  it(`takes 1 to ${PUSH_DEVICE_TOKEN_MAX} characters and refuses one more, naming the field`, () => {
    expect(DeviceToken.safeParse('a').success).toBe(true);
    expect(DeviceToken.safeParse('a'.repeat(PUSH_DEVICE_TOKEN_MAX)).success).toBe(true);
    const long = DeviceToken.safeParse('a'.repeat(PUSH_DEVICE_TOKEN_MAX + 1));
    expect(long.success).toBe(false);
    expect(long.error?.issues[0]?.message).toMatch(/^token must be at most 1024/);
    expect(DeviceToken.safeParse('').error?.issues[0]?.message).toMatch(/^token must not be empty/);
  });

  it('refuses characters that are neither FCM nor APNs token characters (an APNs path stays a path)', () => {
    expect(DeviceToken.safeParse('cX1:APA91b-_.x').success).toBe(true);
    for (const bad of ['a/b', 'a b', 'a?b', '../x'])
      expect(DeviceToken.safeParse(bad).success, bad).toBe(false);
  });

  it('subscribe-device takes kind fcm or apns, never webpush', () => {
    const base = {
      v: 1,
      op: 'subscribe-device',
      account_id: 'a',
      key_id: 'k',
      recipient: 'r',
      token: 'abc',
    };
    expect(PushRequest.safeParse({ ...base, kind: 'fcm' }).success).toBe(true);
    expect(PushRequest.safeParse({ ...base, kind: 'apns' }).success).toBe(true);
    expect(PushRequest.safeParse({ ...base, kind: 'webpush' }).success).toBe(false);
  });
});

describe('provider credentials', () => {
  const sa = {
    project_id: 'my-app',
    client_email: 'x@my-app.iam.gserviceaccount.com',
    private_key: PEM,
  };
  const apns = {
    key_pem: PEM,
    key_id: 'ABC123DEFG',
    team_id: 'TEAM123456',
    topic: 'com.example.app',
    sandbox: false,
  };

  it(`takes a PEM key of up to ${PUSH_PRIVATE_KEY_PEM_MAX} characters and refuses one more`, () => {
    const at = PEM + ' '.repeat(PUSH_PRIVATE_KEY_PEM_MAX - PEM.length);
    expect(FcmServiceAccount.safeParse({ ...sa, private_key: at }).success).toBe(true);
    const over = FcmServiceAccount.safeParse({ ...sa, private_key: `${at} ` });
    expect(over.error?.issues[0]?.message).toMatch(/^service_account.private_key must be at most/);
    expect(ApnsKey.safeParse({ ...apns, key_pem: `${at} ` }).error?.issues[0]?.message).toMatch(
      /^apns.key_pem must be at most/,
    );
  });

  it('names the field of a wrong service account or APNs key', () => {
    expect(
      FcmServiceAccount.safeParse({ ...sa, private_key: 'x' }).error?.issues[0]?.message,
    ).toMatch(/^service_account.private_key must be a PEM private key/);
    expect(
      FcmServiceAccount.safeParse({ ...sa, project_id: 'My App' }).error?.issues[0]?.message,
    ).toMatch(/^service_account.project_id/);
    expect(ApnsKey.safeParse({ ...apns, topic: 'com/x' }).error?.issues[0]?.message).toMatch(
      /^apns.topic/,
    );
    expect(ApnsKey.safeParse(apns).success).toBe(true);
  });
});
