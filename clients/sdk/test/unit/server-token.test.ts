import { randomUUID } from 'node:crypto';
import { recipientToken, TokenInputError } from '@herald/sdk/server';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';

/** A secret shaped as auth makes them (hk_sign_ + 43 base62). */
const SECRET = `hk_sign_${'A1b2C3d4E5'.repeat(4)}xyz`;

/** Runs `make` and returns the TokenInputError it threw. */
async function refusal(make: () => Promise<unknown>): Promise<TokenInputError> {
  const err = await make().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TokenInputError);
  expect(err).toBeInstanceOf(TypeError);
  return err as TokenInputError;
}

describe('recipientToken (@herald/sdk/server, built)', () => {
  it('signs HS256 with the secret: sub, iat and exp, nothing else', async () => {
    const to = randomUUID().toUpperCase();
    const before = Math.floor(Date.now() / 1000);
    const token = await recipientToken({ secret: SECRET, recipient: to, ttl: '15m' });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const { payload } = await jwtVerify(token, new TextEncoder().encode(SECRET), {
      algorithms: ['HS256'],
    });
    expect(Object.keys(payload).sort()).toEqual(['exp', 'iat', 'sub']);
    expect(payload.sub).toBe(to.toLowerCase());
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect((payload.exp as number) - (payload.iat as number)).toBe(900);
  });

  it('lives an hour by default; ttl takes seconds or 90s / 15m / 1h / 1d, at most 24 h', async () => {
    const life = async (ttl?: number | string) => {
      const token = await recipientToken({
        secret: SECRET,
        recipient: randomUUID(),
        ...(ttl === undefined ? {} : { ttl }),
      });
      const { payload } = await jwtVerify(token, new TextEncoder().encode(SECRET));
      return (payload.exp as number) - (payload.iat as number);
    };
    expect(await life()).toBe(3600);
    expect(await life(30)).toBe(30);
    expect(await life('90s')).toBe(90);
    expect(await life('1h')).toBe(3600);
    expect(await life('1d')).toBe(86_400);
    expect(await life(86_400)).toBe(86_400);
    for (const ttl of [0, -5, 1.5, 86_401, '25h', '2d', '1w', '', 'soon', Number.NaN]) {
      const err = await refusal(() =>
        recipientToken({ secret: SECRET, recipient: randomUUID(), ttl }),
      );
      expect(err.field).toBe('ttl');
      expect(err.message).toMatch(/^ttl must be a whole number of seconds from 1 to 86400/);
    }
  });

  it('names the field of a bad input: the API key for the secret, a non-UUID recipient', async () => {
    const recipient = randomUUID();
    const apiKey = await refusal(() =>
      recipientToken({ secret: `hk_live_${'x'.repeat(43)}`, recipient }),
    );
    expect(apiKey.field).toBe('secret');
    expect(apiKey.message).toContain('not the API key');
    for (const secret of ['', 'hk_sign_short', 'a plain password', undefined]) {
      const err = await refusal(() => recipientToken({ secret: secret as string, recipient }));
      expect(err.field).toBe('secret');
      expect(err.message).toMatch(/^secret must be the key’s signing secret/);
    }
    for (const bad of ['user-42', '', 42, undefined, '123e4567-e89b-12d3-a456-426614174000']) {
      const err = await refusal(() => recipientToken({ secret: SECRET, recipient: bad as string }));
      expect(err.field).toBe('recipient');
      expect(err.message).toMatch(/^recipient must be the user’s id as a UUID v4/);
    }
    const none = await refusal(() =>
      recipientToken(undefined as unknown as Parameters<typeof recipientToken>[0]),
    );
    expect(none.field).toBe('secret');
  });
});
