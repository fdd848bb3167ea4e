// @vitest-environment node
import { NotificationBell } from '@herald/react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

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
});
