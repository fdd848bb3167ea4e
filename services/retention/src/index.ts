export { type Env, loadConfig, loadRunOnceConfig, type RunOnceEnv } from './config.js';
export {
  createRetention,
  type Retention,
  type RetentionDeps,
  type RetentionSettings,
} from './service.js';
