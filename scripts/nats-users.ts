// Writes deploy/nats/users.conf from proto's NATS permissions; `--check` exits 1 when the file
// differs (make lint). Run: npm run -s nats-users [-- --check]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderUsersConf } from '@herald/proto';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'deploy', 'nats', 'users.conf');
const want = renderUsersConf();
if (process.argv.includes('--check')) {
  let have = '';
  try {
    have = readFileSync(file, 'utf8');
  } catch {}
  if (have !== want) {
    console.error(
      'deploy/nats/users.conf is not what proto/src/nats-permissions.ts renders: run `npm run -s nats-users`',
    );
    process.exit(1);
  }
  console.log('nats-users: deploy/nats/users.conf matches proto');
} else {
  writeFileSync(file, want);
  console.log('nats-users: wrote deploy/nats/users.conf');
}
