// @vitest-environment jsdom
import { type PushControl, usePush } from '@herald/react/push';
import { act } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY, mount, uuid } from './helpers.js';

/** A component that hands the hook's latest value out. */
function Probe({ onValue }: { onValue: (p: PushControl) => void }) {
  onValue(usePush({ apikey: KEY, userID: USER, serviceWorker: '/herald-sw.js' }));
  return null;
}
const USER = uuid();

describe('usePush (jsdom: no service workers, no Push API)', () => {
  let unmount: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await unmount?.();
    unmount = undefined;
  });

  it('renders on the server as unsupported and off', () => {
    const seen: PushControl[] = [];
    renderToString(<Probe onValue={(p) => seen.push(p)} />);
    expect(seen[0]).toMatchObject({
      pushSupported: false,
      pushEnabled: false,
      pushPending: false,
      pushError: undefined,
    });
  });

  it('says unsupported where the browser cannot push; enablePush resolves false with push_unsupported', async () => {
    let last: PushControl | undefined;
    const m = await mount(<Probe onValue={(p) => (last = p)} />);
    unmount = m.unmount;
    expect(last?.pushSupported).toBe(false);
    let ok: boolean | undefined;
    await act(async () => {
      ok = await last?.enablePush();
    });
    expect(ok).toBe(false);
    expect(last).toMatchObject({ pushEnabled: false, pushPending: false });
    expect(last?.pushError).toMatchObject({ name: 'HeraldError', code: 'push_unsupported' });
    await act(async () => {
      ok = await last?.disablePush();
    });
    expect(ok).toBe(false);
    expect(last?.pushError?.code).toBe('push_unsupported');
  });
});
