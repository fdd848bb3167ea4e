export { type EdgeConfig, loadConfig } from './config.js';
export { createEdge, type Edge, type EdgeDeps } from './edge.js';
