import { describe, expect, it } from 'vitest';
import { darajaTimestamp, stkPassword } from './password.js';

describe('Daraja timestamp and password', () => {
  it('writes the instant in East Africa Time (UTC+3) as YYYYMMDDHHmmss', () => {
    expect(darajaTimestamp(new Date('2024-03-05T06:07:08Z'))).toBe('20240305090708');
  });

  it('rolls over the date, month and year in EAT', () => {
    expect(darajaTimestamp(new Date('2024-12-31T21:00:00Z'))).toBe('20250101000000');
    expect(darajaTimestamp(new Date('2024-02-29T22:59:59Z'))).toBe('20240301015959');
  });

  it('is base64 of shortcode + passkey + timestamp', () => {
    const password = stkPassword('174379', 'passkey', '20240305090708');
    expect(password).toBe(Buffer.from('174379passkey20240305090708').toString('base64'));
    expect(Buffer.from(password, 'base64').toString()).toBe('174379passkey20240305090708');
  });
});
