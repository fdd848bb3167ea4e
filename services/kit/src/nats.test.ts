import { freePort } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { CommonEnv, parseEnv } from './config.js';
import { createLogger } from './logger.js';
import { connectNats } from './nats.js';

describe('connectNats', () => {
  it('names NATS_URL (password hidden) and the fix when nothing accepts connections there', async () => {
    const port = await freePort();
    const config = parseEnv('svc', CommonEnv, {
      NATS_URL: `nats://herald:S3cret@127.0.0.1:${port}`,
      TLS_DISABLED: 'true',
    });
    const failure = await connectNats(config, 'test', createLogger('test', 'silent')).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(failure).toBe(
      `NATS_URL (nats://herald:***@127.0.0.1:${port}): cannot connect (CONNECTION_REFUSED): nothing accepts connections there: start nats-server, or point NATS_URL at it`,
    );
  });
});
