import { runService } from '@herald/kit';
import { loadConfig } from './config.js';
import { createEdge } from './edge.js';

runService({ name: 'socket-edge', connectionName: 'socket-edge', loadConfig, create: createEdge });
