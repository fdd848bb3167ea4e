import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_ENV_FILE, parseEnvFile, REPO_ROOT, withDevEnv } from './dev-env.js';

describe('dev env', () => {
  const dir = mkdtempSync(join(tmpdir(), 'retention-devenv-'));
  const file = join(dir, 'dev.env');
  writeFileSync(
    file,
    '# make dev\nNATS_URL=nats://127.0.0.1:14222\nDATABASE_URL="postgres://x"\n\nbad line\n',
  );

  it('is found at .data/dev.env under the repository root', () => {
    expect(DEV_ENV_FILE).toBe(join(REPO_ROOT, '.data', 'dev.env'));
    expect(REPO_ROOT.endsWith('services/retention')).toBe(false);
  });

  it('parses KEY=VALUE lines, skipping comments and junk', () => {
    expect(parseEnvFile('A=1\n# c\nB="two"\nnope\n')).toEqual({ A: '1', B: 'two' });
  });

  it('fills in NATS_URL when it is unset, keeping variables that are set', () => {
    const { env, loaded } = withDevEnv({ LOG_LEVEL: 'debug', DATABASE_URL: 'mine' }, file);
    expect(loaded).toBe(file);
    expect(env).toMatchObject({
      NATS_URL: 'nats://127.0.0.1:14222',
      LOG_LEVEL: 'debug',
      DATABASE_URL: 'mine',
    });
  });

  it('leaves the environment alone when NATS_URL is set or the file is absent', () => {
    expect(withDevEnv({ NATS_URL: 'nats://elsewhere:4222' }, file)).toEqual({
      env: { NATS_URL: 'nats://elsewhere:4222' },
      loaded: undefined,
    });
    expect(withDevEnv({}, join(dir, 'missing.env')).loaded).toBeUndefined();
  });
});
