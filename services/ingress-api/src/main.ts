import { runService } from '@herald/kit';
import { loadConfig } from './config.js';
import { createIngress } from './service.js';

runService({ name: 'ingress-api', loadConfig, create: createIngress });
