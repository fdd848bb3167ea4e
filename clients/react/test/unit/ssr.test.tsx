// @vitest-environment node
import { NotificationBell, useNotifications } from '@herald/react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

/** A notifications page on the hook, as an app would render it on the server. */
function Page() {
  const n = useNotifications({
    apikey: 'hk_test_ssr-key',
    userID: '3b241101-e2bb-4255-8caf-4136c566a962',
  });
  return (
    <main data-unread={n.unread} data-connected={n.connected} data-more={n.hasMore}>
      {n.items.length}
    </main>
  );
}

describe('server rendering (react-dom/server, no DOM globals)', () => {
  it('renders the red bell and its label without touching window, document or storage', () => {
    expect(typeof window).toBe('undefined');
    const html = renderToString(
      <NotificationBell
        apikey="hk_test_ssr-key"
        userID="3b241101-e2bb-4255-8caf-4136c566a962"
        path="/notifications"
        bellClassName="bell"
      >
        {(data: { title: string }) => <p>{data.title}</p>}
      </NotificationBell>,
    );
    expect(html).toContain('aria-label="Notifications: disconnected, no unread"');
    expect(html).toContain('data-state="disconnected"');
    expect(html).toContain('class="bell"');
    expect(html).toContain('stroke="#dc2626"');
    // The key never reaches the markup.
    expect(html).not.toContain('hk_test_ssr-key');
  });

  it('renders a page on useNotifications: empty, disconnected, nothing touched', () => {
    expect(renderToString(<Page />)).toBe(
      '<main data-unread="0" data-connected="false" data-more="false">0</main>',
    );
  });
});
