import { runService } from '@herald/kit';
import type { Kysely } from 'kysely';
import { loadConfig } from './config.js';
import type { AuthDb } from './db-schema.js';
import { migrateToLatest } from './migrate.js';
import { loadPlanCatalogue, resolvePlansFile } from './plan-catalogue.js';
import { createAuthService } from './service.js';

runService({
  name: 'auth',
  // The plan catalogue is read with the config, before anything connects: a bad catalogue stops
  // the start with the file and the field named.
  loadConfig: (env) => {
    const config = loadConfig(env);
    const plansFile = resolvePlansFile(config.PLANS_FILE);
    return { ...config, plansFile, catalogue: loadPlanCatalogue(plansFile) };
  },
  migrate: (db: Kysely<AuthDb>) => migrateToLatest(db),
  create: ({ plansFile, catalogue, ...config }, deps) => {
    const plans = catalogue.plans.map((p) => p.id);
    deps.logger.info({ plansFile, plans }, 'plan catalogue loaded');
    return createAuthService(config, { ...deps, catalogue });
  },
});
