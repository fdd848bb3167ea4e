import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api.js';
import {
  checkApnsKey,
  checkFcmServiceAccount,
  checkFileSize,
  fieldError,
  keyIdFromFileName,
  PUSH_FILE_MAX_BYTES,
  pushedText,
  testOutcome,
} from '../src/push.js';

const SA = {
  type: 'service_account',
  project_id: 'my-app',
  client_email: 'push@my-app.iam.gserviceaccount.com',
  private_key: '-----BEGIN PRIVATE KEY-----\nMII…\n-----END PRIVATE KEY-----\n',
};

describe('checkFcmServiceAccount', () => {
  it('takes a service-account key file, as Firebase gives it or without its type', () => {
    expect(checkFcmServiceAccount(JSON.stringify(SA))).toEqual({ ok: true, value: SA });
    const { type: _, ...untyped } = SA;
    expect(checkFcmServiceAccount(JSON.stringify(untyped)).ok).toBe(true);
  });

  it('names the field and what is wrong with any other file', () => {
    const error = (text: string) => {
      const r = checkFcmServiceAccount(text);
      expect(r.ok).toBe(false);
      return r.ok ? '' : r.error;
    };
    expect(error('-----BEGIN PRIVATE KEY-----')).toMatch(/^Service account file: not JSON: /);
    expect(error('[1,2]')).toMatch(/^Service account file: not a JSON object/);
    expect(error('null')).toMatch(/not a JSON object/);
    // google-services.json (the app's config, not the server's key) has no type of this kind.
    expect(error(JSON.stringify({ ...SA, type: 'authorized_user' }))).toContain(
      '"type" is "authorized_user", not "service_account"',
    );
    expect(error(JSON.stringify({ project_info: { project_id: 'x' } }))).toContain(
      'no project_id, client_email, private_key',
    );
    expect(error(JSON.stringify({ ...SA, private_key: '' }))).toContain('no private_key:');
  });
});

describe('checkApnsKey', () => {
  it('takes a PEM private key, trimmed, and refuses anything else naming the field', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIGT…\n-----END PRIVATE KEY-----';
    expect(checkApnsKey(`\n${pem}\n\n`)).toEqual({ ok: true, value: pem });
    expect(checkApnsKey(JSON.stringify(SA))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Key file \(\.p8\): not a PEM private key/),
    });
    expect(checkApnsKey('-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----').ok).toBe(
      false,
    );
  });
});

describe('keyIdFromFileName', () => {
  it("reads the key id out of Apple's file name only", () => {
    expect(keyIdFromFileName('AuthKey_ABC123DEFG.p8')).toBe('ABC123DEFG');
    expect(keyIdFromFileName('AuthKey_ABC123DEF.p8')).toBeUndefined();
    expect(keyIdFromFileName('key.p8')).toBeUndefined();
  });
});

describe('checkFileSize', () => {
  it('refuses an empty file and one over the bound, at both edges', () => {
    expect(checkFileSize('Key file', 0)).toBe(
      'Key file: the file is empty: pick the key file itself.',
    );
    expect(checkFileSize('Key file', 1)).toBeUndefined();
    expect(checkFileSize('Key file', PUSH_FILE_MAX_BYTES)).toBeUndefined();
    expect(checkFileSize('Key file', PUSH_FILE_MAX_BYTES + 1)).toMatch(
      /^Key file: 65537 bytes is larger than any key file/,
    );
  });
});

describe('testOutcome', () => {
  it('says accepted, refused with its status, or no answer with why', () => {
    expect(testOutcome({ http_status: 201, error: null, latency_ms: 12 })).toBe(
      'Accepted by the push service (HTTP 201) in 12 ms.',
    );
    expect(testOutcome({ http_status: 410, error: 'gone', latency_ms: 5 })).toBe(
      'Refused by the push service: HTTP 410 (gone) in 5 ms.',
    );
    expect(testOutcome({ http_status: null, error: 'ECONNREFUSED', latency_ms: 3 })).toBe(
      'No answer from the push service: ECONNREFUSED (after 3 ms).',
    );
  });
});

describe('pushedText', () => {
  const iso = (s: string) => `at ${s}`;
  it('shows when and how many subscriptions, or a dash when never pushed', () => {
    expect(pushedText({ at: 'T', subscriptions: 1 }, iso)).toBe('at T (1 subscription)');
    expect(pushedText({ at: 'T', subscriptions: 3 }, iso)).toBe('at T (3 subscriptions)');
    expect(pushedText(null, iso)).toBe('—');
    expect(pushedText(undefined, iso)).toBe('—');
  });
});

describe('fieldError', () => {
  it("puts the page's label of the refused field in front, else the message alone", () => {
    const err = new ApiError(400, 'invalid_field', 'team_id must not be empty', 'team_id');
    expect(fieldError(err, { team_id: 'Team id' })).toBe('Team id: team_id must not be empty');
    expect(fieldError(err, {})).toBe('team_id must not be empty');
    expect(fieldError(new Error('offline'), { team_id: 'Team id' })).toBe('offline');
  });
});
