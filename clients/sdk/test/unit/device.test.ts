import { type DeviceStore, Herald } from '@herald/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeWebSocket } from './fake-websocket.js';
import { KEY, uuid } from './helpers.js';

const base = { apiKey: KEY, client: 'web' } as const;

/** The `device` the SDK sent on its first connect. */
async function sentDevice(options: Partial<ConstructorParameters<typeof Herald>[0]> = {}) {
  const fake = fakeWebSocket();
  const h = new Herald({ ...base, ...options, WebSocket: fake.WebSocket });
  h.subscribe(uuid());
  await new Promise((r) => setTimeout(r, 0));
  const device = new URL(fake.last().url).searchParams.get('device');
  h.disconnect();
  return device;
}

function memoryStore(initial?: string): DeviceStore & { writes: string[] } {
  let value = initial;
  const writes: string[] = [];
  return {
    writes,
    get: () => value,
    set: (id) => {
      value = id;
      writes.push(id);
    },
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('device id', () => {
  it('makes one id per installation, keeps it in the store and sends it on every connect', async () => {
    const store = memoryStore();
    const first = await sentDevice({ deviceStore: store });
    expect(first).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(store.writes).toEqual([first]);
    expect(await sentDevice({ deviceStore: store })).toBe(first);
    expect(store.writes).toHaveLength(1);
  });

  it("keeps it in the origin's localStorage when there is one, shared by every instance (tabs)", async () => {
    const items = new Map<string, string>();
    vi.stubGlobal('localStorage', {
      getItem: (k: string) => items.get(k) ?? null,
      setItem: (k: string, v: string) => items.set(k, v),
    });
    const first = await sentDevice();
    expect(items.get('herald.device')).toBe(first);
    expect(await sentDevice()).toBe(first);
  });

  it('without localStorage keeps one id in memory for the process', async () => {
    const first = await sentDevice();
    expect(first).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(await sentDevice()).toBe(first);
  });

  it('replaces a stored value the server would refuse', async () => {
    const store = memoryStore('not a valid id!');
    const sent = await sentDevice({ deviceStore: store });
    expect(sent).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(store.writes).toEqual([sent]);
  });

  it('sends a given id, or none with device: false', async () => {
    expect(await sentDevice({ device: 'x'.repeat(64) })).toBe('x'.repeat(64));
    expect(await sentDevice({ device: false })).toBeNull();
  });

  it.each(['', 'x'.repeat(65), 'a.b', 'é'])('refuses options.device %j, naming it', (device) => {
    expect(() => new Herald({ ...base, device })).toThrow(/options.device must be 1-64/);
  });
});
