import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CommonEnv, ConfigError, checkConfigFiles, envInt, parseEnv } from './config.js';

describe('parseEnv', () => {
  const Env = z.object({
    DATABASE_URL: z.string().startsWith('postgres://', 'must be a postgres:// URL'),
    LIMIT: envInt(5, 1, 10),
  });

  it('returns typed values with defaults', () => {
    expect(parseEnv('svc', Env, { DATABASE_URL: 'postgres://h/db' })).toEqual({
      DATABASE_URL: 'postgres://h/db',
      LIMIT: 5,
    });
  });

  it('names every bad variable in one error, and never prints a password', () => {
    let err: unknown;
    try {
      parseEnv('svc', Env, { DATABASE_URL: 'mysql://admin:s3cret@db/x', LIMIT: '11' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toMatch(/DATABASE_URL .*must be a postgres:\/\/ URL/);
    expect(message).toMatch(/LIMIT \("11"\): must be at most 10/);
    expect(message).not.toContain('s3cret');
    expect(message).toContain('admin:***@');
  });

  it('refuses an empty or non-decimal integer instead of reading it as 0 or as hex', () => {
    for (const [value, message] of [
      [
        '',
        /LIMIT \(""\): is empty: set a whole number from 1 to 10, or unset it for the default \(5\)/,
      ],
      ['  ', /LIMIT \(" {2}"\): is empty/],
      ['0x5', /LIMIT \("0x5"\): must be a whole number from 1 to 10, in decimal digits/],
      ['5e0', /must be a whole number/],
      ['5.5', /must be a whole number/],
      ['0', /LIMIT \("0"\): must be at least 1/],
    ] as const) {
      expect(() => parseEnv('svc', Env, { DATABASE_URL: 'postgres://h/db', LIMIT: value })).toThrow(
        message,
      );
    }
    for (const [value, parsed] of [
      ['1', 1],
      [' 10 ', 10],
    ] as const) {
      expect(parseEnv('svc', Env, { DATABASE_URL: 'postgres://h/db', LIMIT: value }).LIMIT).toBe(
        parsed,
      );
    }
  });
});

describe('checkConfigFiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-config-'));
  const pem = join(dir, 'cert.pem');
  writeFileSync(pem, '-----BEGIN CERTIFICATE-----\n');
  const env = (over: Record<string, string>) => parseEnv('svc', CommonEnv, over);

  it('names every file variable whose file cannot be read, and what to give instead', () => {
    let err: unknown;
    try {
      checkConfigFiles(
        'svc',
        env({ TLS_CERT_FILE: pem, TLS_KEY_FILE: join(dir, 'missing.pem'), NATS_CA_FILE: dir }),
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toContain(
      `TLS_KEY_FILE ("${join(dir, 'missing.pem')}"): no such file: give the path of a PEM file this process can read`,
    );
    expect(message).toContain(`NATS_CA_FILE ("${dir}"): is not a file`);
    expect(message).not.toContain('TLS_CERT_FILE');
  });

  it('passes readable files, and skips the listener files when TLS is disabled', () => {
    expect(() =>
      checkConfigFiles('svc', env({ TLS_CERT_FILE: pem, TLS_KEY_FILE: pem })),
    ).not.toThrow();
    expect(() =>
      checkConfigFiles('svc', env({ TLS_DISABLED: 'true', TLS_CERT_FILE: join(dir, 'gone.pem') })),
    ).not.toThrow();
  });
});

describe('CommonEnv', () => {
  it('reads NATS_PING_INTERVAL_MS from 1000 ms up, 10 s by default', () => {
    expect(parseEnv('svc', CommonEnv, {}).NATS_PING_INTERVAL_MS).toBe(10_000);
    expect(
      parseEnv('svc', CommonEnv, { NATS_PING_INTERVAL_MS: '1000' }).NATS_PING_INTERVAL_MS,
    ).toBe(1000);
    expect(() => parseEnv('svc', CommonEnv, { NATS_PING_INTERVAL_MS: '999' })).toThrow(
      /NATS_PING_INTERVAL_MS.*at least 1000/,
    );
  });

  it('reads NATS_CONNECT_TIMEOUT_MS from 500 ms to 600 s, 20 s by default', () => {
    const read = (v: string) =>
      parseEnv('svc', CommonEnv, { NATS_CONNECT_TIMEOUT_MS: v }).NATS_CONNECT_TIMEOUT_MS;
    expect(parseEnv('svc', CommonEnv, {}).NATS_CONNECT_TIMEOUT_MS).toBe(20_000);
    expect(read('500')).toBe(500);
    expect(read('600000')).toBe(600_000);
    expect(() => read('499')).toThrow(/NATS_CONNECT_TIMEOUT_MS/);
    expect(() => read('600001')).toThrow(/NATS_CONNECT_TIMEOUT_MS/);
  });
});
