import { writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { HeraldError, PlanCatalogue } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PLANS_FILE,
  loadPlanCatalogue,
  PlanCatalogueError,
  resolvePlansFile,
} from '../src/plan-catalogue.js';
import { liveKeyStanding, parseUntil, resolvePlanChange } from '../src/subscriptions.js';
import { TEST_CATALOGUE } from './catalogue.js';
import { writeCatalogue } from './cli.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

function catalogueError(json: unknown): string {
  const file = writeCatalogue(json);
  try {
    loadPlanCatalogue(file);
  } catch (err) {
    expect(err).toBeInstanceOf(PlanCatalogueError);
    const message = (err as Error).message;
    expect(message).toContain(file);
    return message;
  }
  throw new Error('expected the catalogue to be refused');
}

const limits = { connections: 1, dispatch_rate: 1, dispatch_burst: 1, queue_per_recipient: 1 };
const free = { id: 'free', name: 'Free', paid: false, limits, price: { usd: 0, kes: 0 } };

describe('the plan catalogue', () => {
  it('ships in config/plans.json: free (not paid), Hobby and Startup (paid, USD and KES)', () => {
    const file = resolvePlansFile(undefined);
    expect(file).toBe(join(ROOT, DEFAULT_PLANS_FILE));
    const catalogue = loadPlanCatalogue(file);
    expect(catalogue.plans.map((p) => [p.id, p.paid])).toEqual([
      ['free', false],
      ['hobby', true],
      ['startup', true],
    ]);
    for (const plan of catalogue.plans.filter((p) => p.paid)) {
      expect(plan.price.usd).toBeGreaterThan(0);
      expect(plan.price.kes).toBeGreaterThan(0);
    }
    const [dev, hobby] = catalogue.plans;
    expect(catalogue.test_key_limits.connections).toBeLessThanOrEqual(
      hobby?.limits.connections ?? 0,
    );
    expect(dev?.limits.connections).toBeLessThan(hobby?.limits.connections ?? 0);
  });

  it('resolves PLANS_FILE against the working directory, absolute paths as given', () => {
    expect(resolvePlansFile('plans.json', '/srv/herald')).toBe('/srv/herald/plans.json');
    expect(resolvePlansFile('/etc/herald/plans.json')).toBe('/etc/herald/plans.json');
    expect(isAbsolute(resolvePlansFile(''))).toBe(true);
  });

  it('names the file when it is missing or not JSON', () => {
    expect(() => loadPlanCatalogue('/nonexistent/plans.json')).toThrow(
      /plan catalogue \/nonexistent\/plans.json cannot be read \(ENOENT\): set PLANS_FILE/,
    );
    const file = writeCatalogue({});
    writeFileSync(file, '{"plans": [');
    expect(() => loadPlanCatalogue(file)).toThrow(/is not valid JSON/);
  });

  it('names every bad field', () => {
    expect(catalogueError({ plans: [free] })).toMatch(/test_key_limits: Invalid input/);
    expect(catalogueError({ plans: [], test_key_limits: limits })).toMatch(/plans: /);
    expect(
      catalogueError({
        plans: [free, { ...free, id: 'hobby', limits: { ...limits, connections: 0 } }],
        test_key_limits: limits,
      }),
    ).toMatch(/plans\[1\]\.limits\.connections: must be greater than 0/);
    expect(
      catalogueError({
        plans: [free, { ...free, id: 'hobby', limits: { ...limits, dispatch_burst: 2.5 } }],
        test_key_limits: limits,
      }),
    ).toMatch(/plans\[1\]\.limits\.dispatch_burst: must be a whole number/);
    expect(
      catalogueError({
        plans: [free, { ...free, id: 'hobby', price: { usd: -1, kes: 0 } }],
        test_key_limits: limits,
      }),
    ).toMatch(/plans\[1\]\.price\.usd: must be 0 or more/);
    expect(
      catalogueError({ plans: [free, { ...free, id: 'Gold Plan' }], test_key_limits: limits }),
    ).toMatch(/plans\[1\]\.id: must be 1 to 32 of a-z/);
  });

  it('requires unique ids and a free plan that is not paid', () => {
    expect(catalogueError({ plans: [free, free], test_key_limits: limits })).toMatch(
      /plans\[1\]\.id: plan id "free" appears twice/,
    );
    expect(catalogueError({ plans: [{ ...free, id: 'hobby' }], test_key_limits: limits })).toMatch(
      /plans: the catalogue must hold a plan with id "free"/,
    );
    expect(catalogueError({ plans: [{ ...free, paid: true }], test_key_limits: limits })).toMatch(
      /plans\[0\]\.paid: the "free" plan must have paid: false/,
    );
  });

  it('accepts the smallest valid catalogue', () => {
    expect(PlanCatalogue.parse({ plans: [free], test_key_limits: limits }).plans).toHaveLength(1);
  });
});

describe('plan changes', () => {
  it('needs --until for a paid plan and refuses it for the free plan', () => {
    expect(resolvePlanChange(TEST_CATALOGUE, 'free', undefined)).toMatchObject({
      plan: { id: 'free' },
      period_end: null,
    });
    expect(() => resolvePlanChange(TEST_CATALOGUE, 'hobby', undefined)).toThrow(
      /until is required for the paid hobby plan/,
    );
    expect(() => resolvePlanChange(TEST_CATALOGUE, 'free', '2099-01-01')).toThrow(
      /only for paid plans/,
    );
    const err = (() => {
      try {
        resolvePlanChange(TEST_CATALOGUE, 'pro', '2099-01-01');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({
      field: 'plan',
      message: 'plan "pro" is not in the plan catalogue: use one of free, hobby, startup',
    });
  });

  it('parses dates as midnight UTC and date-times with their zone', () => {
    expect(parseUntil('2099-01-31').toISOString()).toBe('2099-01-31T00:00:00.000Z');
    expect(parseUntil('2024-02-29').toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(parseUntil('2099-01-31T23:59:59.999Z').toISOString()).toBe('2099-01-31T23:59:59.999Z');
    expect(parseUntil('2099-01-31T02:00+02:00').toISOString()).toBe('2099-01-31T00:00:00.000Z');
    for (const bad of ['2099-1-31', '31/01/2099', '2099-01-31 10:00Z', '2099-01-31T10:00', '']) {
      expect(() => parseUntil(bad)).toThrow(/is not a date/);
    }
    for (const bad of ['2025-02-29', '2099-04-31', '2099-13-01', '2099-00-10']) {
      expect(() => parseUntil(bad)).toThrow(/is not a real date/);
    }
  });

  it('lets Live keys work while the paid period runs, and says why not otherwise', () => {
    const end = new Date('2099-01-01T00:00:00Z');
    const at = (plan: string, period_end: Date | null, now: number) =>
      liveKeyStanding(TEST_CATALOGUE, { plan, period_end }, now);
    expect(at('hobby', end, end.getTime() - 1).active).toBe(true);
    expect(at('hobby', end, end.getTime())).toMatchObject({
      active: false,
      reason:
        'the Hobby plan lapsed at 2099-01-01T00:00:00.000Z: renew the subscription to use Live keys again',
    });
    expect(at('hobby', null, 0)).toMatchObject({
      active: false,
      reason: expect.stringMatching(/no paid period/),
    });
    expect(at('free', null, 0)).toMatchObject({
      active: false,
      reason: 'the account is on the Free plan: move to Hobby or Startup, or use the Test key',
    });
    expect(at('gold', end, 0)).toMatchObject({
      active: false,
      reason: expect.stringMatching(/no longer offered/),
    });
  });
});
