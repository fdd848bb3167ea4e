import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAdminArgs } from '../src/admin/args.js';
import { defaultDevEnvPath, loadAdminSettings, parseDotEnv } from '../src/admin/settings.js';

describe('admin settings', () => {
  it('parses the KEY=VALUE lines make dev writes', () => {
    expect(
      parseDotEnv(
        '# written by make dev\nDATABASE_URL=postgres://h/db\n\nexport NATS_URL="nats://127.0.0.1:14222"\nBAD LINE\n',
      ),
    ).toEqual({ DATABASE_URL: 'postgres://h/db', NATS_URL: 'nats://127.0.0.1:14222' });
  });

  it('fills unset variables from dev.env, environment first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-admin-'));
    const file = join(dir, 'dev.env');
    writeFileSync(file, 'DATABASE_URL=postgres://dev/herald\nNATS_URL=nats://dev:4222\n');
    const settings = loadAdminSettings({ NATS_URL: 'nats://mine:4222', DATABASE_URL: '' }, file);
    expect(settings.env.DATABASE_URL).toBe('postgres://dev/herald');
    expect(settings.env.NATS_URL).toBe('nats://mine:4222');
    expect(settings.devEnvFile).toBe(file);
    expect(loadAdminSettings({}, join(dir, 'absent.env')).devEnvFile).toBeUndefined();
  });

  it('looks for dev.env under the repo root, whatever the working directory', () => {
    expect(defaultDevEnvPath()).toBe(
      join(new URL('../../../', import.meta.url).pathname, '.data/dev.env'),
    );
  });
});

describe('admin arguments', () => {
  it('accepts each command with its flags', () => {
    expect(
      parseAdminArgs([
        'key',
        'create',
        '--account',
        'a',
        '--kind',
        'test',
        '--client',
        'mobile',
        '--json',
      ]),
    ).toEqual({
      command: 'key create',
      json: true,
      flags: { account: 'a', kind: 'test', client: 'mobile' },
    });
    expect(parseAdminArgs(['--help']).command).toBe('help');
  });

  it.each([
    [[], /a command is required/],
    [['key', 'delete'], /unknown command "key delete"/],
    [['key', 'revoke', '--email', 'x'], /--email is not a flag of `key revoke`/],
    [['key', 'revoke', '--key', ''], /--key is required/],
    [['account', 'create', '--email'], /--email <value>' argument missing/],
    [['migrate', '--json=yes'], /--json' does not take an argument/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseAdminArgs(argv)).toThrow(message);
  });
});
