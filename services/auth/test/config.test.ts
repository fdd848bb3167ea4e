import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const base = { DATABASE_URL: 'postgres://u:p@db:5432/herald', TLS_DISABLED: 'true' };

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig(base)).toMatchObject({
      PORT: 8445,
      MIGRATE_ON_START: true,
      DB_POOL_MAX: 10,
      NATS_URL: 'nats://127.0.0.1:4222',
    });
    expect(loadConfig({ ...base, MIGRATE_ON_START: 'false', PORT: '0' })).toMatchObject({
      MIGRATE_ON_START: false,
      PORT: 0,
    });
  });

  it('applies the documented defaults of plans, keys and the account API', () => {
    expect(loadConfig(base).PLANS_FILE).toBeUndefined();
    expect(loadConfig(base)).toMatchObject({
      MAX_LIVE_KEYS_PER_ACCOUNT: 25,
      ACCOUNT_API_ORIGIN: 'https://localhost:8445',
      SESSION_TTL_MS: 8 * 3600_000,
      LOGIN_MAX_FAILURES: 10,
      LOGIN_WINDOW_MS: 15 * 60_000,
      PASSWORD_SCRYPT_LOG_N: 15,
      ACCOUNT_API_BODY_LIMIT_BYTES: 16_384,
      TRUST_PROXY: false,
    });
  });

  it('takes ACCOUNT_API_ORIGIN as one https origin (http only for localhost), normalised', () => {
    const origin = (v: string) => loadConfig({ ...base, ACCOUNT_API_ORIGIN: v }).ACCOUNT_API_ORIGIN;
    expect(origin('https://Dashboard.Example.com')).toBe('https://dashboard.example.com');
    expect(origin('https://dashboard.example.com:443/')).toBe('https://dashboard.example.com');
    expect(origin('https://dashboard.example.com:8443')).toBe('https://dashboard.example.com:8443');
    expect(origin('http://localhost:5173')).toBe('http://localhost:5173');
    for (const bad of [
      'http://dashboard.example.com',
      'https://dashboard.example.com/app',
      'https://dashboard.example.com?x=1',
      'dashboard.example.com',
      'https://user:pw@dashboard.example.com',
    ]) {
      expect(() => loadConfig({ ...base, ACCOUNT_API_ORIGIN: bad })).toThrow(
        /ACCOUNT_API_ORIGIN .*must be the origin the dashboard is served from/,
      );
    }
  });

  it("bounds the dashboard credential's limits at their documented edges", () => {
    const at = (name: string, value: string) => loadConfig({ ...base, [name]: value });
    expect(loadConfig(base)).toMatchObject({
      DASHBOARD_KEY_TTL_MS: 3600_000,
      DASHBOARD_MAX_CONNECTIONS: 5,
      DASHBOARD_NOTICE_TIMEOUT_MS: 5000,
    });
    expect(at('DASHBOARD_KEY_TTL_MS', '60000').DASHBOARD_KEY_TTL_MS).toBe(60_000);
    expect(() => at('DASHBOARD_KEY_TTL_MS', '59999')).toThrow(
      /DASHBOARD_KEY_TTL_MS .*at least 60000/,
    );
    expect(at('DASHBOARD_KEY_TTL_MS', '86400000').DASHBOARD_KEY_TTL_MS).toBe(86_400_000);
    expect(() => at('DASHBOARD_KEY_TTL_MS', '86400001')).toThrow(/at most 86400000/);
    expect(at('DASHBOARD_MAX_CONNECTIONS', '1').DASHBOARD_MAX_CONNECTIONS).toBe(1);
    expect(() => at('DASHBOARD_MAX_CONNECTIONS', '0')).toThrow(
      /DASHBOARD_MAX_CONNECTIONS .*at least 1/,
    );
    expect(at('DASHBOARD_MAX_CONNECTIONS', '100').DASHBOARD_MAX_CONNECTIONS).toBe(100);
    expect(() => at('DASHBOARD_MAX_CONNECTIONS', '101')).toThrow(/at most 100/);
    expect(at('DASHBOARD_NOTICE_TIMEOUT_MS', '100').DASHBOARD_NOTICE_TIMEOUT_MS).toBe(100);
    expect(() => at('DASHBOARD_NOTICE_TIMEOUT_MS', '99')).toThrow(/at least 100/);
  });

  it('bounds the account API limits at their documented edges', () => {
    const at = (name: string, value: string) => loadConfig({ ...base, [name]: value });
    expect(at('SESSION_TTL_MS', '60000').SESSION_TTL_MS).toBe(60_000);
    expect(() => at('SESSION_TTL_MS', '59999')).toThrow(/SESSION_TTL_MS .*at least 60000/);
    expect(at('PASSWORD_SCRYPT_LOG_N', '20').PASSWORD_SCRYPT_LOG_N).toBe(20);
    expect(() => at('PASSWORD_SCRYPT_LOG_N', '9')).toThrow(/PASSWORD_SCRYPT_LOG_N .*at least 10/);
    expect(() => at('PASSWORD_SCRYPT_LOG_N', '21')).toThrow(/at most 20/);
    expect(at('MAX_LIVE_KEYS_PER_ACCOUNT', '1').MAX_LIVE_KEYS_PER_ACCOUNT).toBe(1);
    expect(() => at('MAX_LIVE_KEYS_PER_ACCOUNT', '0')).toThrow(/MAX_LIVE_KEYS_PER_ACCOUNT/);
    expect(loadConfig(base).MAX_PUSHER_APPS_PER_ACCOUNT).toBe(10);
    expect(at('MAX_PUSHER_APPS_PER_ACCOUNT', '1').MAX_PUSHER_APPS_PER_ACCOUNT).toBe(1);
    expect(at('MAX_PUSHER_APPS_PER_ACCOUNT', '1000').MAX_PUSHER_APPS_PER_ACCOUNT).toBe(1000);
    expect(() => at('MAX_PUSHER_APPS_PER_ACCOUNT', '0')).toThrow(
      /MAX_PUSHER_APPS_PER_ACCOUNT .*at least 1/,
    );
    expect(() => at('MAX_PUSHER_APPS_PER_ACCOUNT', '1001')).toThrow(
      /MAX_PUSHER_APPS_PER_ACCOUNT .*at most 1000/,
    );
    expect(() => at('LOGIN_MAX_FAILURES', '0')).toThrow(/LOGIN_MAX_FAILURES .*at least 1/);
    expect(() => at('ACCOUNT_API_BODY_LIMIT_BYTES', '255')).toThrow(/at least 256/);
  });

  it('requires a Postgres DATABASE_URL', () => {
    expect(() => loadConfig({ TLS_DISABLED: 'true' })).toThrow(
      /DATABASE_URL \(unset\): is required/,
    );
    expect(() => loadConfig({ ...base, DATABASE_URL: 'mysql://db/herald' })).toThrow(
      /DATABASE_URL .*must be a Postgres URL/,
    );
    expect(loadConfig({ ...base, DATABASE_URL: 'postgresql://db/herald' }).DATABASE_URL).toBe(
      'postgresql://db/herald',
    );
  });

  it('bounds DB_POOL_MAX to 1..1000', () => {
    expect(loadConfig({ ...base, DB_POOL_MAX: '1' }).DB_POOL_MAX).toBe(1);
    expect(loadConfig({ ...base, DB_POOL_MAX: '1000' }).DB_POOL_MAX).toBe(1000);
    expect(() => loadConfig({ ...base, DB_POOL_MAX: '0' })).toThrow(/DB_POOL_MAX .*at least 1/);
    expect(() => loadConfig({ ...base, DB_POOL_MAX: '1001' })).toThrow(
      /DB_POOL_MAX .*at most 1000/,
    );
  });

  it('requires TLS files unless TLS_DISABLED', () => {
    const err = (() => {
      try {
        loadConfig({ DATABASE_URL: base.DATABASE_URL });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(String(err)).toMatch(/TLS_CERT_FILE/);
    expect(String(err)).toMatch(/TLS_KEY_FILE/);
  });
});
