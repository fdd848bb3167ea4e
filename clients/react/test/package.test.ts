import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { build } from '../scripts/build.js';
import { BUDGET_BYTES, measure } from '../scripts/size.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('@herald/react as shipped (dist/)', () => {
  it('is one ES module with types and the optional stylesheet; React, icons and SDK stay external', async () => {
    await build({ ifStale: true });
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.'].types).toBe('./dist/index.d.ts');
    expect(pkg.exports['./styles.css']).toBe('./dist/styles.css');
    expect(pkg.sideEffects).toEqual(['*.css']);
    expect(pkg.peerDependencies).toEqual({ react: '>=18.0.0', 'react-dom': '>=18.0.0' });
    const js = await readFile(join(ROOT, 'dist', 'index.js'), 'utf8');
    for (const dep of ['react', 'react/jsx-runtime', 'lucide-react', '@herald/sdk']) {
      expect(js).toContain(`from "${dep}"`);
    }
    expect(js).not.toMatch(/require\(/);
    const dts = await readFile(join(ROOT, 'dist', 'index.d.ts'), 'utf8');
    expect(dts).toContain('NotificationBellProps');
    expect(dts).toContain('declare function NotificationBell');
    await readFile(join(ROOT, 'dist', 'styles.css'), 'utf8');
  });

  it(`the bell with the SDK and its icons stays under ${BUDGET_BYTES / 1024} KB min+gzip`, async () => {
    const size = await measure('NotificationBell');
    expect(size.gzip).toBeGreaterThan(1024);
    expect(size.gzip).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('tree-shakes: importing one constant pulls in neither the bell, the SDK nor the icons', async () => {
    const { code } = await measure('CONNECTED_COLOR');
    // Imports of the external React stay (a bundler cannot know React is side-effect free); no
    // code of the bell, the SDK or the icons does.
    const own = code.replace(/import\{[^}]*\}from"[^"]+";/g, '');
    expect(own).toMatch(/^var (\w+)="#16a34a";export\{\1 as CONNECTED_COLOR\};\n$/);
  });
});
