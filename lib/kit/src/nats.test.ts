import { Writable } from 'node:stream';
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

  it('warns when credentials would travel in clear text, and not over TLS', async () => {
    const port = await freePort();
    const warned = async (NATS_URL: string) => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const config = parseEnv('svc', CommonEnv, { NATS_URL, TLS_DISABLED: 'true' });
      await connectNats(config, 'test', createLogger('test', 'warn', sink)).catch(() => undefined);
      return lines.some((l) => l.includes('NATS credentials travel in clear text'));
    };
    expect(await warned(`nats://herald:S3cret@127.0.0.1:${port}`)).toBe(true);
    expect(await warned(`tls://herald:S3cret@127.0.0.1:${port}`)).toBe(false);
    expect(await warned(`nats://127.0.0.1:${port}`)).toBe(false);
  });
});
