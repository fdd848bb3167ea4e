// @vitest-environment jsdom
import { NotificationBell, type NotificationBellProps } from '@herald/react';
import { act, StrictMode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acquireHub } from '../../src/hub.js';
import { SEEN_CAPACITY } from '../../src/persisted.js';
import {
  bell,
  click,
  deliver,
  installFakes,
  KEY,
  key,
  type Mounted,
  mount,
  uuid,
  waitFor,
} from './helpers.js';

type Extra = Partial<Omit<NotificationBellProps, 'children'>> & {
  children?: NotificationBellProps['children'];
};

const CLASSES = {
  dropdownClassName: 'c-dropdown',
  headerClassName: 'c-header',
  titleClassName: 'c-title',
  closeButtonClassName: 'c-close',
  contentClassName: 'c-content',
  emptyStateClassName: 'c-empty',
  footerClassName: 'c-footer',
  viewAllClassName: 'c-viewall',
  poweredByClassName: 'c-powered',
  poweredByLinkClassName: 'c-powered-link',
} as const;

describe('NotificationBell (jsdom, fake sockets)', () => {
  let fakes: ReturnType<typeof installFakes>;
  let mounted: Mounted[] = [];
  let user: string;

  const ui = (extra: Extra = {}) => (
    <NotificationBell
      apikey={KEY}
      userID={user}
      path="/notifications"
      wsUrl="wss://edge.test"
      baseUrl="https://api.test"
      {...extra}
    >
      {extra.children ?? ((data: { title: string }) => <p className="item">{data.title}</p>)}
    </NotificationBell>
  );
  const show = async (extra: Extra = {}, strict = false) => {
    const m = await mount(strict ? <StrictMode>{ui(extra)}</StrictMode> : ui(extra));
    mounted.push(m);
    return m;
  };
  const socket = () => waitFor(() => fakes.last());

  beforeEach(() => {
    localStorage.clear();
    fakes = installFakes();
    user = uuid();
    // jsdom has no media playback; the sound test installs its own.
    vi.stubGlobal(
      'Audio',
      class {
        currentTime = 0;
        play = () => Promise.resolve();
        pause = () => {};
      },
    );
  });
  afterEach(async () => {
    for (const m of mounted.splice(0)) await m.unmount();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('renders red and says so before connecting; one socket for the user, with the key and client web', async () => {
    const { container } = await show();
    expect(bell(container).getAttribute('aria-label')).toBe(
      'Notifications: disconnected, no unread',
    );
    expect(bell(container).dataset.state).toBe('disconnected');
    expect(container.querySelector('svg')?.getAttribute('stroke')).toBe('#dc2626');
    const sock = await socket();
    const url = new URL(sock.url);
    expect(url.origin + url.pathname).toBe('wss://edge.test/ws/connect');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      api_key: KEY,
      recipient: user,
      client: 'web',
      // The SDK reads batched queued events ("events" frames, list acks).
      batch: '1',
      // The SDK's id for this browser (issue 32), kept in the origin's localStorage.
      device: localStorage.getItem('herald.device'),
    });
    expect(url.searchParams.get('device')).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('passes getToken to the SDK: a re-render opens no socket, and the next connect asks the latest one', async () => {
    const first = vi.fn(async () => 'token-from-the-first-render');
    const latest = vi.fn(async () => 'token-from-the-latest-render');
    const m = await show({ getToken: first });
    const sock = await socket();
    expect(new URL(sock.url).searchParams.get('token')).toBe('token-from-the-first-render');
    // A new function on re-render opens no new socket; the next connect asks the latest one.
    await m.render(ui({ getToken: latest }));
    expect(fakes.sockets).toHaveLength(1);
    sock.serverClose(1006);
    const next = await waitFor(() => {
      if (fakes.sockets.length < 2) throw new Error('no reconnect yet');
      return fakes.last();
    });
    expect(new URL(next.url).searchParams.get('token')).toBe('token-from-the-latest-render');
  });

  it('passes a fixed token prop to the SDK', async () => {
    await show({ token: 'a-fixed-token' });
    const sock = await socket();
    expect(new URL(sock.url).searchParams.get('token')).toBe('a-fixed-token');
  });

  it('turns green once accepted, counts an event, announces it politely and calls onNotification', async () => {
    const onNotification = vi.fn();
    const { container } = await show({ onNotification });
    const sock = await socket();
    await deliver(sock, 'e1', { title: 'Order shipped' });
    await waitFor(() =>
      expect(bell(container).getAttribute('aria-label')).toBe('Notifications: connected, 1 unread'),
    );
    expect(container.querySelector('svg')?.getAttribute('stroke')).toBe('#16a34a');
    expect(container.querySelector('[data-herald-badge]')?.textContent).toBe('1');
    const live = container.querySelector('[role="status"]');
    expect(live?.getAttribute('aria-live')).toBe('polite');
    expect(live?.textContent).toBe('New notification');
    expect(onNotification).toHaveBeenCalledTimes(1);
    expect(onNotification.mock.calls[0]?.[0]).toEqual({ title: 'Order shipped' });
    expect(onNotification.mock.calls[0]?.[1]).toMatchObject({ id: 'e1' });
    // A redelivery of the same id is not counted again.
    await deliver(sock, 'e1', { title: 'Order shipped' });
    expect(container.querySelector('[data-herald-badge]')?.textContent).toBe('1');
    expect(onNotification).toHaveBeenCalledTimes(1);
  });

  it('ignores a "connected" left in storage by a closed leader tab: red until its own socket is accepted', async () => {
    localStorage.setItem(`herald.bell.v1:${user}:connection`, 'connected');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { container } = await show();
    const sock = await socket();
    await waitFor(() => expect(bell(container).dataset.state).toBe('disconnected'));
    await act(async () => sock.serverClose(1006));
    expect(bell(container).dataset.state).toBe('disconnected');
    await waitFor(() =>
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^Herald bell: network /)),
    );
  });

  it('under StrictMode opens exactly one socket, and closes it on unmount', async () => {
    const m = await show({}, true);
    await socket();
    await act(() => new Promise((r) => setTimeout(r, 50)));
    expect(fakes.sockets).toHaveLength(1);
    await deliver(fakes.last(), 'e1', { title: 'x' });
    await waitFor(() => expect(bell(m.container).dataset.state).toBe('connected'));
    await m.unmount();
    mounted = [];
    expect(fakes.sockets).toHaveLength(1);
    expect(fakes.last().readyState).toBe(3);
  });

  it('applies every class-name prop to its part, and links View all to path', async () => {
    const { container } = await show({
      ...CLASSES,
      bellClassName: 'c-bell',
      className: 'c-root',
      poweredByHref: 'https://herald.example.com/about',
    });
    await click(bell(container));
    for (const [prop, cls] of Object.entries(CLASSES)) {
      if (prop === 'contentClassName') continue; // the list exists once there is an item
      expect(container.querySelectorAll(`.${cls}`), prop).toHaveLength(1);
    }
    expect(container.querySelector('.c-root')).not.toBeNull();
    expect(container.querySelector('.c-bell')).toBe(bell(container));
    expect(container.querySelector('.c-title')?.textContent).toBe('Notifications');
    expect(container.querySelector('.c-empty')?.textContent).toBe('No notifications yet');
    expect(container.querySelector<HTMLAnchorElement>('.c-viewall')?.getAttribute('href')).toBe(
      '/notifications',
    );
    expect(container.querySelector('.c-powered')?.textContent).toBe('Powered by Herald');
    expect(container.querySelector('.c-powered .c-powered-link')?.textContent).toBe('Herald');
    expect(container.querySelector('.c-powered-link')?.getAttribute('href')).toBe(
      'https://herald.example.com/about',
    );
    expect(container.querySelector('[role="dialog"]')?.className).toBe('c-dropdown');
    await deliver(await socket(), 'e1', { title: 'First' });
    await waitFor(() =>
      expect(container.querySelector('.c-content .item')?.textContent).toBe('First'),
    );
    expect(container.querySelector('.c-empty')).toBeNull();
  });

  it('opening the dropdown marks everything read, and the read state is stored', async () => {
    const { container } = await show();
    const sock = await socket();
    await deliver(sock, 'e1', { title: 'a' });
    await deliver(sock, 'e2', { title: 'b' });
    await waitFor(() =>
      expect(container.querySelector('[data-herald-badge]')?.textContent).toBe('2'),
    );
    await click(bell(container));
    await waitFor(() => expect(container.querySelector('[data-herald-badge]')).toBeNull());
    expect([...container.querySelectorAll('.item')].map((e) => e.textContent)).toEqual(['b', 'a']);
    const stored = JSON.parse(localStorage.getItem(`herald.bell.v1:${user}`) ?? '{}');
    expect(stored.unread).toBe(0);
    expect(bell(container).getAttribute('aria-label')).toBe('Notifications: connected, no unread');
  });

  it('keeps unread across a reload (remount) and shows 99+ beyond 99', async () => {
    const items = Array.from({ length: 3 }, (_, i) => ({
      id: `s${i}`,
      ts: i,
      data: { title: `t${i}` },
    }));
    localStorage.setItem(
      `herald.bell.v1:${user}`,
      JSON.stringify({ items, unread: 150, seen: items.map((i) => i.id) }),
    );
    const first = await show();
    await waitFor(() =>
      expect(first.container.querySelector('[data-herald-badge]')?.textContent).toBe('99+'),
    );
    expect(bell(first.container).getAttribute('aria-label')).toBe(
      'Notifications: disconnected, 99+ unread',
    );
    await first.unmount();
    mounted = [];
    const again = await show();
    await waitFor(() =>
      expect(again.container.querySelector('[data-herald-badge]')?.textContent).toBe('99+'),
    );
  });

  it("follows another tab's changes (storage events): new events and reads", async () => {
    const onNotification = vi.fn();
    const { container } = await show({ onNotification });
    await socket();
    const storageKey = `herald.bell.v1:${user}`;
    const otherTab = (value: object) =>
      act(async () => {
        const newValue = JSON.stringify(value);
        localStorage.setItem(storageKey, newValue);
        window.dispatchEvent(new StorageEvent('storage', { key: storageKey, newValue }));
      });
    const item = { id: 'x1', ts: 1, data: { title: 'from the leader' } };
    await otherTab({ items: [item], unread: 1, seen: ['x1'] });
    await waitFor(() =>
      expect(container.querySelector('[data-herald-badge]')?.textContent).toBe('1'),
    );
    expect(onNotification).toHaveBeenCalledWith(
      { title: 'from the leader' },
      { id: 'x1', ts: 1, payload: { title: 'from the leader' } },
    );
    await otherTab({ items: [item], unread: 0, seen: ['x1'] });
    await waitFor(() => expect(container.querySelector('[data-herald-badge]')).toBeNull());
    expect(onNotification).toHaveBeenCalledTimes(1);
  });

  it('an item whose data makes children throw shows a fallback for that item only', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const { container } = await show({
      itemErrorClassName: 'c-item-error',
      children: (data: { title?: string }) => {
        if (!data.title) throw new Error('bad data');
        return <p className="item">{data.title.toUpperCase()}</p>;
      },
    });
    const sock = await socket();
    await deliver(sock, 'ok1', { title: 'fine' });
    await deliver(sock, 'bad', 42);
    await deliver(sock, 'ok2', { title: 'also fine' });
    await click(bell(container));
    await waitFor(() => expect(container.querySelectorAll('[data-herald-item]')).toHaveLength(3));
    expect([...container.querySelectorAll('.item')].map((e) => e.textContent)).toEqual([
      'ALSO FINE',
      'FINE',
    ]);
    const fallback = container.querySelector('[data-herald-item="bad"] .c-item-error');
    expect(fallback?.textContent).toBe('This notification cannot be shown');
    expect(bell(container)).toBeTruthy();
  });

  it('Escape and an outside click close the dropdown; focus returns to the bell; arrows move between parts', async () => {
    const { container } = await show();
    const sock = await socket();
    await deliver(sock, 'e1', { title: 'a' });
    await click(bell(container));
    const dialog = () => container.querySelector('[role="dialog"]');
    expect(dialog()).not.toBeNull();
    expect(bell(container).getAttribute('aria-expanded')).toBe('true');
    // Focus starts on the close button; ArrowDown reaches the item, End the last link.
    expect(document.activeElement?.getAttribute('aria-label')).toBe('Close notifications');
    await key(document.activeElement as Element, 'ArrowDown');
    expect((document.activeElement as HTMLElement).dataset.heraldItem).toBe('e1');
    await key(document.activeElement as Element, 'End');
    expect(document.activeElement?.textContent).toBe('Herald');
    await key(document.activeElement as Element, 'Escape');
    expect(dialog()).toBeNull();
    expect(document.activeElement).toBe(bell(container));
    await click(bell(container));
    expect(dialog()).not.toBeNull();
    await act(async () => {
      document.body.dispatchEvent(new MouseEvent('pointerdown', { bubbles: true }));
    });
    expect(dialog()).toBeNull();
    await click(bell(container));
    await click(container.querySelector('[aria-label="Close notifications"]') as Element);
    expect(dialog()).toBeNull();
    expect(document.activeElement).toBe(bell(container));
  });

  it('a new userID or apikey closes the old socket and opens one for the new values', async () => {
    const m = await show();
    const first = await socket();
    const next = uuid();
    await m.render(ui({ userID: next }));
    await waitFor(() => expect(fakes.sockets).toHaveLength(2));
    // The old socket's close may land a tick after the new one opens (leader hand-over timers).
    await waitFor(() => expect(first.readyState).toBe(3));
    expect(new URL(fakes.last().url).searchParams.get('recipient')).toBe(next);
    const second = fakes.last();
    await m.render(ui({ userID: next, apikey: `${KEY}-2` }));
    await waitFor(() => expect(fakes.sockets).toHaveLength(3));
    await waitFor(() => expect(second.readyState).toBe(3));
    expect(new URL(fakes.last().url).searchParams.get('api_key')).toBe(`${KEY}-2`);
  });

  it('keeps at most maxItems notifications, newest first', async () => {
    const { container } = await show({ maxItems: 2 });
    const sock = await socket();
    for (const id of ['a', 'b', 'c']) await deliver(sock, id, { title: id });
    await click(bell(container));
    await waitFor(() =>
      expect([...container.querySelectorAll('.item')].map((e) => e.textContent)).toEqual([
        'c',
        'b',
      ]),
    );
  });

  it('speaks the locale: labels and texts in French', async () => {
    const { container } = await show({ locale: 'fr-FR' });
    expect(bell(container).getAttribute('aria-label')).toBe(
      'Notifications: déconnecté, aucune non lue',
    );
    await click(bell(container));
    expect(container.querySelector('[data-herald-empty]')?.textContent).toBe('Aucune notification');
  });

  it('plays soundUrl once for a burst of events, and waits for a gesture when autoplay is blocked', async () => {
    const plays: string[] = [];
    let blocked = true;
    class FakeAudio {
      currentTime = 0;
      constructor(readonly src: string) {}
      play() {
        if (blocked) return Promise.reject(new DOMException('no gesture yet', 'NotAllowedError'));
        plays.push(this.src);
        return Promise.resolve();
      }
      pause() {}
    }
    vi.stubGlobal('Audio', FakeAudio);
    await show({ soundUrl: '/sounds/ding.mp3' });
    const sock = await socket();
    for (const id of ['a', 'b', 'c']) await deliver(sock, id, { title: id });
    expect(plays).toEqual([]);
    blocked = false;
    await act(async () => {
      window.dispatchEvent(new Event('pointerdown'));
    });
    await waitFor(() => expect(plays).toEqual(['/sounds/ding.mp3']));
    // The gesture is consumed: a second one plays nothing more.
    await act(async () => {
      window.dispatchEvent(new Event('pointerdown'));
    });
    expect(plays).toEqual(['/sounds/ding.mp3']);
  });

  it('without onError, a refused socket is reported on the console (never silent)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    await show();
    const sock = await socket();
    await act(async () => sock.refuse(4403, 'origin_mismatch', 'Origin is not the key domain'));
    await waitFor(() => expect(warn).toHaveBeenCalledTimes(1));
    expect(warn.mock.calls[0]?.[0]).toBe(
      'Herald bell: refused origin_mismatch: Origin is not the key domain',
    );
  });

  it('reports socket errors through onError, and stays red', async () => {
    const onError = vi.fn();
    const { container } = await show({ onError });
    const sock = await socket();
    await act(async () => sock.refuse(4401, 'invalid_api_key'));
    await waitFor(() => expect(onError).toHaveBeenCalledTimes(1));
    expect(onError.mock.calls[0]?.[0]).toMatchObject({ code: 'invalid_api_key', kind: 'refused' });
    expect(bell(container).dataset.state).toBe('disconnected');
  });

  it('a bad userID is reported through onError (and the console), once, and the bell stays red', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const onError = vi.fn();
    const { container } = await show({ userID: 'not-a-uuid', onError });
    await waitFor(() => expect(onError).toHaveBeenCalledTimes(1));
    expect(onError.mock.calls[0]?.[0]).toMatchObject({
      name: 'HeraldError',
      code: 'invalid_recipient',
      field: 'userID',
      kind: 'refused',
    });
    expect(onError.mock.calls[0]?.[0].message).toMatch(/UUID v4/);
    expect(error).toHaveBeenCalledTimes(1);
    expect(bell(container).dataset.state).toBe('disconnected');
    expect(fakes.sockets).toHaveLength(0);
    // StrictMode subscribes, unsubscribes and subscribes again: still one report.
    const strictError = vi.fn();
    await show({ userID: 'not-a-uuid-either', onError: strictError }, true);
    await waitFor(() => expect(strictError).toHaveBeenCalledTimes(1));
    await act(() => new Promise((r) => setTimeout(r, 20)));
    expect(strictError).toHaveBeenCalledTimes(1);
  });

  it('a bad URL is reported through onError too', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const onError = vi.fn();
    await show({ wsUrl: 'http://edge.test', onError });
    await waitFor(() => expect(onError).toHaveBeenCalledTimes(1));
    expect(onError.mock.calls[0]?.[0]).toMatchObject({ code: 'invalid_field' });
    expect(onError.mock.calls[0]?.[0].message).toMatch(/options\.wsUrl/);
  });

  it('tabs of one user with different keys elect a leader per key, under lock names without the key', async () => {
    const request = vi.spyOn(navigator.locks, 'request');
    await show();
    await show({ apikey: `${KEY}-2` });
    // The in-memory lock manager queues a second request for a name held: one name, one socket.
    await waitFor(() => expect(fakes.sockets).toHaveLength(2));
    const keys = fakes.sockets.map((s) => new URL(s.url).searchParams.get('api_key'));
    expect(keys.sort()).toEqual([KEY, `${KEY}-2`]);
    const names = request.mock.calls.map((c) => String(c[0]));
    expect(new Set(names).size).toBe(2);
    for (const name of names) expect(name).not.toContain(KEY.slice(8));
  });

  it('remembers a bounded number of shown ids, however many events a long-lived tab sees', async () => {
    const { hub, release } = acquireHub({
      apikey: KEY,
      userID: user,
      baseUrl: 'https://api.test',
      wsUrl: 'wss://edge.test',
    });
    try {
      const announced: string[] = [];
      hub.onNew((items) => announced.push(...items.map((i) => i.id)));
      const sock = await socket();
      const total = SEEN_CAPACITY + 100;
      await act(async () => {
        sock.open();
        for (let i = 0; i < total; i++) sock.event(`e${i}`, { title: `${i}` });
      });
      expect(announced).toHaveLength(total);
      expect(hub.rememberedIds).toBe(SEEN_CAPACITY);
    } finally {
      release();
      await act(() => new Promise((r) => setTimeout(r, 5)));
    }
  });
});
