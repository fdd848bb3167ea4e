import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchNats, natsServerBinary, stopProcess } from '@herald/testkit';

/**
 * A private nats-server whose JetStream may store at most `maxFileStore` bytes: the store-wide
 * byte bound that refuses publishes (10023) instead of trimming old events, which a file-store
 * stream's own max_bytes does on servers < 2.10.5. The shared harness starts servers without a
 * config file, hence this small variant.
 */
export async function startNatsWithStoreLimit(
  maxFileStore: number,
): Promise<{ url: string; stop(): Promise<void> }> {
  const { bin } = await natsServerBinary();
  const dir = mkdtempSync(join(tmpdir(), 'herald-nats-limit-'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, `jetstream { store_dir: "${dir}", max_file_store: ${maxFileStore} }\n`);
  const { proc, port } = await launchNats(bin, ['-c', conf], { portsDir: dir });
  return {
    url: `nats://127.0.0.1:${port}`,
    async stop() {
      await stopProcess(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
