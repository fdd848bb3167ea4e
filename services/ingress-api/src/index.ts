export { type Env, type IngressConfig, loadConfig } from './config.js';
export { createIngress, type Ingress, type IngressDeps } from './service.js';
