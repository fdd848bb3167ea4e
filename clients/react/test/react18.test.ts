import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../scripts/build.js';

const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..', '..');

/**
 * React 18 cannot share node_modules with the workspace's React 19 (react-dom 18 resolves its
 * own `react`), so the packages are tested as an app would get them: `npm pack` of @herald/sdk
 * and @herald/react, installed with react@18 and react-dom@18 into an empty project, where a
 * script server-renders the bell, hydrates it and opens it. React 19 is the unit tests' version.
 */
describe('@herald/react with React 18 (packed install)', () => {
  let project: string;

  beforeAll(async () => {
    await build({ ifStale: true });
    project = await mkdtemp(join(tmpdir(), 'herald-react18-'));
    await run(
      'npm',
      ['pack', '-w', '@herald/sdk', '-w', '@herald/react', '--pack-destination', project],
      { cwd: ROOT },
    );
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'react18-app', private: true, type: 'module' }),
    );
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        './herald-sdk-0.1.0.tgz',
        './herald-react-0.1.0.tgz',
        'react@18',
        'react-dom@18',
        'jsdom@26',
      ],
      { cwd: project },
    );
    await copyFile(join(HERE, 'react18', 'check.mjs'), join(project, 'check.mjs'));
  }, 240_000);

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('server-renders, hydrates without a mismatch and opens the dropdown', async () => {
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: project });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(seen.react).toMatch(/^18\./);
    expect(seen.ssrLabel).toBe('Notifications: disconnected, no unread');
    expect(seen.hydratedLabel).toMatch(/^Notifications: (dis)?connected, no unread$/);
    expect(seen.dialog).toBe(true);
    expect(seen.empty).toBe('No notifications yet');
    expect(seen.errors).toEqual([]);
  });
});
