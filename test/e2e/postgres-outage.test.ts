import { get, openSocket } from '@herald/testkit';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { eventually, newTenant, notify, recipient, type Tenant, useStack } from './fixtures.js';

/**
 * Postgres goes away under dispatch and connect load, as a restart or failover does to its
 * clients: every connection is killed and new ones are refused for a while. The services must
 * stay up (a dropped pg connection once crashed a process with an uncaught `read ECONNRESET`),
 * answer 503 meanwhile (never a false 200/202, never a 500), and recover by themselves.
 */
const LOAD_WORKERS = 8;

describe('Postgres outage under load', () => {
  // No key caching, so every dispatch and connect needs auth, and auth needs Postgres.
  const noCache = { KEY_CACHE_TTL_MS: '0', KEY_NEGATIVE_CACHE_TTL_MS: '0' };
  const stack = useStack({ env: { 'ingress-api': noCache, 'socket-edge': noCache } });

  it('keeps every service up, answers 503 while Postgres is away, and recovers alone', async () => {
    const s = stack();
    const tenant: Tenant = await newTenant(s);
    expect((await notify(s, tenant, recipient(), { warm: true })).status).toBe(202);

    // Statements go through the maintenance database: the one being cut off is `herald`.
    const admin = new pg.Client({
      connectionString: s.databaseUrl.replace(/\/herald$/, '/postgres'),
    });
    await admin.connect();
    const cutOff = async (allow: boolean) => {
      await admin.query(`alter database herald allow_connections ${allow}`);
      if (!allow)
        await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = 'herald'`,
        );
    };
    /**
     * Holds a lock that auth's key lookups wait on, until some are waiting: the cut then drops
     * connections in the middle of a query (checked-out pg clients, the case that crashed), not
     * only idle ones, whatever the timing.
     */
    const holdLookups = async () => {
      const holder = new pg.Client({ connectionString: s.databaseUrl });
      // The cut terminates this session too; its error is expected.
      holder.on('error', () => {});
      await holder.connect();
      await holder.query('begin');
      await holder.query('lock table api_keys in access exclusive mode');
      await eventually(
        async () => {
          const { rows } = await admin.query(
            `select count(*)::int as n from pg_stat_activity
             where datname = 'herald' and wait_event_type = 'Lock'`,
          );
          return rows[0].n > 0;
        },
        'key lookups waiting on the lock',
        30_000,
      );
      return holder;
    };

    const connectOutcome = async (): Promise<number> => {
      const sock = openSocket(s.wsUrl, s.ca, {
        apiKey: tenant.key.key,
        recipient: recipient(),
        client: 'mobile',
      });
      const opened = await sock.opened.then(
        () => true,
        () => false,
      );
      if (opened) {
        await sock.close();
        return 101;
      }
      return (await sock.ended).httpStatus ?? 0;
    };

    let okBefore = 0;
    const dispatched: number[] = [];
    const connects: number[] = [];
    let outage = false;
    let stop = false;
    // Several senders and connecting clients at once, so auth has queries in flight (checked-out
    // pg clients, the case that crashed) when the connections drop.
    const load = Promise.all(
      Array.from({ length: LOAD_WORKERS }, async () => {
        while (!stop) {
          const during = outage;
          const [res, end] = await Promise.all([
            notify(s, tenant, recipient(), { n: dispatched.length }),
            connectOutcome(),
          ]);
          if (!during && !outage && res.status === 202 && end === 101) okBefore++;
          if (during && outage) {
            dispatched.push(res.status);
            connects.push(end);
          }
        }
      }),
    );
    // Load running before the cut: both kinds of request succeed.
    await eventually(() => okBefore >= LOAD_WORKERS, 'load flowing before the outage', 30_000);
    try {
      const holder = await holdLookups();
      await cutOff(false);
      await holder.end().catch(() => undefined);
      outage = true;
      await eventually(
        () => dispatched.length >= 4 * LOAD_WORKERS,
        'dispatches during the outage',
        60_000,
      );
      outage = false;
      await cutOff(true);
      // Recovery needs nothing from outside: the pools reconnect on their own.
      await eventually(
        async () => (await notify(s, tenant, recipient(), { after: true })).status === 202,
        'dispatch recovers',
        30_000,
      );
      await eventually(async () => (await connectOutcome()) === 101, 'connect recovers', 30_000);
    } finally {
      stop = true;
      await load;
      await cutOff(true);
      await admin.end();
    }
    expect(new Set(dispatched)).toEqual(new Set([503]));
    expect(new Set(connects)).toEqual(new Set([503]));
    // The auth service itself stayed up and says it is ready again.
    expect((await get(`https://127.0.0.1:${s.ports.auth}`, s.ca, '/readyz')).status).toBe(200);
  }, 180_000);
});
