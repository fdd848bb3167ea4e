export { type AuthConfig, loadConfig } from './config.js';
export { type AuthService, type AuthServiceDeps, createAuthService } from './service.js';
