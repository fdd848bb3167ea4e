// Run inside a project that installed the packed @herald/react and @herald/sdk with React 18:
// server-renders the bell, hydrates it in jsdom, opens the dropdown, and prints what it saw.
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><div id="root"></div>', { url: 'https://app.test/' });
for (const name of [
  'window',
  'document',
  'navigator',
  'HTMLElement',
  'Node',
  'MouseEvent',
  'KeyboardEvent',
  'StorageEvent',
  'localStorage',
]) {
  Object.defineProperty(globalThis, name, {
    value: dom.window[name],
    configurable: true,
    writable: true,
  });
}

const React = await import('react');
const { renderToString } = await import('react-dom/server');
const { hydrateRoot } = await import('react-dom/client');
const { NotificationBell } = await import('@herald/react');

const element = React.createElement(
  NotificationBell,
  {
    apikey: 'hk_test_react18-check',
    userID: '3b241101-e2bb-4255-8caf-4136c566a962',
    path: '/notifications',
    wsUrl: 'wss://127.0.0.1:9',
    emptyStateClassName: 'empty',
  },
  (data) => React.createElement('p', null, data.title),
);
const html = renderToString(element);
const root = document.getElementById('root');
root.innerHTML = html;
const errors = [];
const app = hydrateRoot(root, element, { onRecoverableError: (e) => errors.push(String(e)) });
const tick = () => new Promise((r) => setTimeout(r, 50));
await tick();
const button = root.querySelector('button[aria-haspopup]');
button.dispatchEvent(new dom.window.MouseEvent('click', { bubbles: true }));
for (let i = 0; i < 100 && !root.querySelector('[role="dialog"]'); i++) await tick();
console.log(
  JSON.stringify({
    react: React.version,
    ssrLabel: /aria-label="([^"]+)"/.exec(html)?.[1],
    hydratedLabel: button.getAttribute('aria-label'),
    dialog: root.querySelector('[role="dialog"]') !== null,
    empty: root.querySelector('.empty')?.textContent,
    errors,
  }),
);
app.unmount();
process.exit(0);
