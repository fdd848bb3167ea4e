// @vitest-environment jsdom
import { NotificationBell, type Notifications, useNotifications } from '@herald/react';
import { act, type ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FakeSocket } from '../../../sdk/test/unit/fake-websocket.js';
import {
  bell,
  click,
  deliver,
  installFakes,
  KEY,
  type Mounted,
  mount,
  uuid,
  waitFor,
} from './helpers.js';

const sentRequests = (sock: FakeSocket) =>
  sock.sent.map((s) => JSON.parse(s)).filter((f) => f.type !== 'ack');
/** The requests sent, without the ref each carries (the SDK's counter). */
const frames = (sock: FakeSocket) => sentRequests(sock).map(({ ref: _, ...f }) => f);
const send = (sock: FakeSocket, frame: object) =>
  act(async () => {
    if (sock.readyState === 0) sock.open();
    sock.raw(JSON.stringify(frame));
  });
/** The edge's answer to the last request sent on `sock`: it echoes that request's ref. */
const reply = (sock: FakeSocket, frame: object) => {
  const ref = sentRequests(sock).at(-1)?.ref;
  if (typeof ref !== 'string') throw new Error('the last request carried no ref');
  return send(sock, { ...frame, ref });
};
const ev = (id: string, read = false) => ({
  id,
  ts: Number(id.slice(1)),
  payload: { title: id },
  read,
});

const conn = { apikey: KEY, wsUrl: 'wss://edge.test', baseUrl: 'https://api.test' };

/** A notifications page on useNotifications, two events a page; `expose` hands the hook out. */
function Page(props: { userID: string; expose: (n: Notifications<{ title: string }>) => void }) {
  const n = useNotifications<{ title: string }>({ ...conn, userID: props.userID, pageSize: 2 });
  props.expose(n);
  return (
    <ul>
      {n.items.map((i) => (
        <li key={i.id} data-read={String(i.read)}>
          {i.data.title}
        </li>
      ))}
    </ul>
  );
}

describe('inbox mode in the bell and useNotifications (jsdom, fake sockets)', () => {
  let fakes: ReturnType<typeof installFakes>;
  const mounted: Mounted[] = [];
  let user: string;
  const badge = (c: HTMLElement) => c.querySelector('[data-herald-badge]')?.textContent ?? null;
  const show = async (ui: ReactNode) => {
    const m = await mount(ui);
    mounted.push(m);
    return m;
  };
  const theBell = () => (
    <NotificationBell {...conn} userID={user} path="/notifications">
      {(data: { title: string }) => <p className="item">{data.title}</p>}
    </NotificationBell>
  );
  let page: Notifications<{ title: string }>;
  const thePage = () => <Page userID={user} expose={(n) => (page = n)} />;
  const listed = (c: HTMLElement) =>
    [...c.querySelectorAll('li')].map(
      (li) => `${li.textContent}${li.dataset.read === 'true' ? '✓' : ''}`,
    );
  const socket = () => waitFor(() => fakes.last());

  beforeEach(() => {
    localStorage.clear();
    fakes = installFakes();
    user = uuid();
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

  it("shows the server's count, never counts an event itself, and opening it reads all on the server", async () => {
    const { container } = await show(theBell());
    const sock = await socket();
    await send(sock, { type: 'inbox', unread: 5 });
    await waitFor(() => expect(badge(container)).toBe('5'));
    await deliver(sock, 'e6', { title: 'six' });
    const stored = () => JSON.parse(localStorage.getItem(`herald.bell.v1:${user}`) ?? '{}');
    await waitFor(() => expect(stored().items).toHaveLength(1));
    expect(badge(container), 'the server counts it: its next frame says so').toBe('5');
    await send(sock, { type: 'inbox', unread: 6 });
    await waitFor(() => expect(badge(container)).toBe('6'));
    await click(bell(container));
    await waitFor(() => expect(badge(container)).toBeNull());
    expect(frames(sock)).toEqual([{ type: 'read', all: true }]);
    await click(bell(container));
    // Read on another device: the server's count clears the badge here too.
    await send(sock, { type: 'inbox', unread: 2 });
    await waitFor(() => expect(badge(container)).toBe('2'));
    await send(sock, { type: 'inbox', unread: 0 });
    await waitFor(() => expect(badge(container)).toBeNull());
    expect(stored()).toMatchObject({ unread: 0, inbox: true });
  });

  it('a plain key (no inbox frame) counts locally as before, even after an inbox key left its mark', async () => {
    localStorage.setItem(
      `herald.bell.v1:${user}`,
      JSON.stringify({ items: [], unread: 4, seen: [], inbox: true }),
    );
    const { container } = await show(theBell());
    const sock = await socket();
    await deliver(sock, 'e1', { title: 'one' });
    await waitFor(() => expect(badge(container)).toBe('5'));
    await deliver(sock, 'e2', { title: 'two' });
    await waitFor(() => expect(badge(container)).toBe('6'));
    await click(bell(container));
    await waitFor(() => expect(badge(container)).toBeNull());
    expect(frames(sock), 'no read frame for a plain key').toEqual([]);
  });

  it('useNotifications pages history, puts live arrivals on top and marks one or all read', async () => {
    const { container } = await show(thePage());
    const sock = await socket();
    await send(sock, { type: 'inbox', unread: 3 });
    await waitFor(() =>
      expect(frames(sock)).toEqual([{ type: 'history', before: null, limit: 2 }]),
    );
    expect(page.loading).toBe(true);
    // This device's catch-up arrives as events, older than the page: listed at their place only.
    const catchUp = (id: string) => ({ type: 'event', ...ev(id), read: undefined });
    await send(sock, catchUp('e3'));
    await reply(sock, { type: 'history', events: [ev('e4'), ev('e3', true)], next: '3' });
    await waitFor(() => expect(listed(container)).toEqual(['e4', 'e3✓']));
    await send(sock, catchUp('e2'));
    expect(listed(container)).toEqual(['e4', 'e3✓']);
    expect(page).toMatchObject({ inbox: true, unread: 3, hasMore: true, loading: false });
    await act(async () => page.loadMore());
    expect(frames(sock).at(-1)).toEqual({ type: 'history', before: '3', limit: 2 });
    await act(async () => page.loadMore());
    expect(frames(sock), 'one page at a time').toHaveLength(2);
    // An event arrives while the page is on its way; the page holds it too (stored first).
    await deliver(sock, 'e5', { title: 'e5' });
    await reply(sock, { type: 'history', events: [ev('e2'), ev('e1')], next: null });
    await waitFor(() => expect(listed(container)).toEqual(['e5', 'e4', 'e3✓', 'e2', 'e1']));
    expect(page.hasMore).toBe(false);
    await act(async () => page.markRead('e4'));
    expect(frames(sock).at(-1)).toEqual({ type: 'read', ids: ['e4'] });
    expect(listed(container)).toEqual(['e5', 'e4✓', 'e3✓', 'e2', 'e1']);
    await reply(sock, { type: 'inbox', unread: 3 }); // the read's answer: the next may go
    await act(async () => page.markAllRead());
    expect(frames(sock).at(-1)).toEqual({ type: 'read', all: true });
    expect(listed(container)).toEqual(['e5✓', 'e4✓', 'e3✓', 'e2✓', 'e1✓']);
  });

  it('useNotifications follows reads made elsewhere, and loads again after a failed first page', async () => {
    const { container } = await show(thePage());
    const first = await socket();
    await send(first, { type: 'inbox', unread: 2 });
    await waitFor(() => expect(frames(first)).toHaveLength(1));
    await act(async () => first.serverClose(1006));
    await waitFor(() => expect(page.error?.code).toBe('not_connected'));
    const second = await waitFor(() => {
      if (fakes.sockets.length < 2) throw new Error('no reconnect yet');
      return fakes.last();
    });
    await send(second, { type: 'inbox', unread: 2 });
    await waitFor(() =>
      expect(frames(second)).toEqual([{ type: 'history', before: null, limit: 2 }]),
    );
    await reply(second, { type: 'history', events: [ev('e2'), ev('e1')], next: null });
    await waitFor(() => expect(listed(container)).toEqual(['e2', 'e1']));
    expect(page.error).toBeUndefined();
    await send(second, { type: 'inbox', unread: 0 });
    await waitFor(() => expect(listed(container)).toEqual(['e2✓', 'e1✓']));
  });

  it("a new userID starts another list: the old user's page, still on its way, is dropped", async () => {
    const m = await show(thePage());
    const first = await socket();
    await send(first, { type: 'inbox', unread: 1 });
    await waitFor(() => expect(frames(first)).toHaveLength(1));
    user = uuid();
    await m.render(thePage());
    const second = await waitFor(() => {
      if (fakes.sockets.length < 2) throw new Error('no socket for the new user yet');
      return fakes.last();
    });
    await send(second, { type: 'inbox', unread: 1 });
    await waitFor(() =>
      expect(frames(second)).toEqual([{ type: 'history', before: null, limit: 2 }]),
    );
    await reply(first, { type: 'history', events: [ev('e1')], next: null });
    await reply(second, { type: 'history', events: [ev('e9')], next: null });
    await waitFor(() => expect(listed(m.container)).toEqual(['e9']));
    expect(page.error).toBeUndefined();
  });

  it('without an inbox key lists what the bell keeps here, unread first, with no pages', async () => {
    const { container } = await show(thePage());
    const sock = await socket();
    await deliver(sock, 'e1', { title: 'one' });
    await deliver(sock, 'e2', { title: 'two' });
    await waitFor(() => expect(listed(container)).toEqual(['two', 'one']));
    expect(page).toMatchObject({ inbox: false, unread: 2, hasMore: false });
    await act(async () => page.markAllRead());
    await waitFor(() => expect(listed(container)).toEqual(['two✓', 'one✓']));
    expect(frames(sock)).toEqual([]);
  });
});
