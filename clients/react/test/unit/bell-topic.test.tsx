// @vitest-environment jsdom
import { type BellItem, NotificationBell } from '@herald/react';
import { act } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installFakes, KEY, type Mounted, mount, uuid, waitFor } from './helpers.js';

/** A topic copy's `topic` (issue 44) reaches onNotification's event and the item `children` gets. */
describe('NotificationBell: a topic copy keeps its topic', () => {
  let fakes: ReturnType<typeof installFakes>;
  let mounted: Mounted | undefined;

  beforeEach(() => {
    localStorage.clear();
    fakes = installFakes();
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
    await mounted?.unmount();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('passes the topic to onNotification, and keeps it on the stored item', async () => {
    const onNotification = vi.fn();
    const user = uuid();
    mounted = await mount(
      <NotificationBell
        apikey={KEY}
        userID={user}
        path="/notifications"
        wsUrl="wss://edge.test"
        baseUrl="https://api.test"
        onNotification={onNotification}
      >
        {(data: { title: string }, item: BellItem) => (
          <p className="item" data-topic={item.topic ?? ''}>
            {data.title}
          </p>
        )}
      </NotificationBell>,
    );
    const sock = await waitFor(() => fakes.last());
    await act(async () => {
      sock.open();
      sock.raw(
        JSON.stringify({ type: 'event', id: 't1', ts: 1, topic: 'team', payload: { title: 'a' } }),
      );
      sock.raw(JSON.stringify({ type: 'event', id: 'd1', ts: 2, payload: { title: 'b' } }));
    });
    await waitFor(() => expect(onNotification).toHaveBeenCalledTimes(2));
    expect(onNotification.mock.calls[0]?.[1]).toMatchObject({ id: 't1', topic: 'team' });
    expect(onNotification.mock.calls[1]?.[1].topic).toBeUndefined();
    const stored = JSON.parse(localStorage.getItem(`herald.bell.v1:${user}`) ?? '{}');
    expect(stored.items).toEqual([
      { id: 'd1', ts: 2, data: { title: 'b' } },
      { id: 't1', ts: 1, data: { title: 'a' }, topic: 'team' },
    ]);
  });
});
