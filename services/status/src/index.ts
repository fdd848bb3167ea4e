export { loadConfig, type StatusConfig } from './config.js';
export type { StatusDb } from './db-schema.js';
export { mergeBatch } from './merge.js';
export { migrateToLatest } from './migrate.js';
export { countsOver, recentEvents, statusOfIds } from './queries.js';
export {
  createStatusService,
  ensureStatusStream,
  type StatusService,
  type StatusServiceDeps,
} from './service.js';
export { trimBefore } from './trim.js';
