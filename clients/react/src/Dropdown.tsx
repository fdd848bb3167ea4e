import { X } from 'lucide-react';
import { type KeyboardEvent, type ReactNode, useEffect, useRef } from 'react';
import { ItemBoundary } from './ItemBoundary.js';
import type { Messages } from './messages.js';
import type { BellItem, NotificationBellProps } from './types.js';

/**
 * The default target of "Powered by Herald". Placeholder until the project has a public home:
 * self-hosters point it at their own page with `poweredByHref`.
 */
export const HERALD_URL = 'https://github.com/herald-realtime/herald';

type ClassProps = Pick<
  NotificationBellProps,
  | 'dropdownClassName'
  | 'headerClassName'
  | 'titleClassName'
  | 'closeButtonClassName'
  | 'contentClassName'
  | 'emptyStateClassName'
  | 'footerClassName'
  | 'viewAllClassName'
  | 'poweredByClassName'
  | 'poweredByLinkClassName'
  | 'itemErrorClassName'
  | 'poweredByHref'
>;

interface DropdownProps extends ClassProps {
  id: string;
  items: BellItem[];
  path: string;
  messages: Messages;
  renderItem: NotificationBellProps['children'];
  onClose: () => void;
}

const FOCUSABLE = 'button, a[href], [tabindex="0"]';

/** Calls `children(data)` inside its own render, so the boundary around it sees a throw. */
function Item(props: { render: NotificationBellProps['children']; item: BellItem }): ReactNode {
  return props.render(props.item.data, props.item);
}

/**
 * The open panel: header (title, close), the list through `children(data)` with a per-item
 * fallback, the empty state, and the footer (View all, powered by). Arrow keys, Home and End move
 * between its controls and items; Escape closes (the bell then takes the focus back).
 */
export function Dropdown(props: DropdownProps): ReactNode {
  const { messages: m, items } = props;
  const panel = useRef<HTMLDivElement>(null);
  const titleId = `${props.id}-title`;

  useEffect(() => {
    panel.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
  }, []);

  const onKeyDown = (ev: KeyboardEvent<HTMLDivElement>) => {
    if (ev.key === 'Escape') {
      ev.stopPropagation();
      props.onClose();
      return;
    }
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(ev.key)) return;
    const all = [...(panel.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])];
    if (all.length === 0) return;
    ev.preventDefault();
    const at = all.indexOf(document.activeElement as HTMLElement);
    const next =
      ev.key === 'Home'
        ? 0
        : ev.key === 'End'
          ? all.length - 1
          : (at + (ev.key === 'ArrowDown' ? 1 : -1) + all.length) % all.length;
    all[next]?.focus();
  };

  return (
    <div
      ref={panel}
      id={props.id}
      role="dialog"
      aria-labelledby={titleId}
      className={props.dropdownClassName}
      data-herald-dropdown=""
      onKeyDown={onKeyDown}
    >
      <div className={props.headerClassName} data-herald-header="">
        <h2 id={titleId} className={props.titleClassName}>
          {m.title}
        </h2>
        <button
          type="button"
          className={props.closeButtonClassName}
          aria-label={m.close}
          onClick={props.onClose}
        >
          <X aria-hidden="true" focusable="false" size={16} />
        </button>
      </div>
      {items.length === 0 ? (
        <p className={props.emptyStateClassName} data-herald-empty="">
          {m.empty}
        </p>
      ) : (
        <ul className={props.contentClassName} data-herald-content="">
          {items.map((item) => (
            // biome-ignore lint/a11y/noNoninteractiveTabindex: items are reachable with the arrow keys
            <li key={item.id} tabIndex={0} data-herald-item={item.id}>
              <ItemBoundary
                fallback={
                  <span className={props.itemErrorClassName} data-herald-item-error="">
                    {m.itemError}
                  </span>
                }
              >
                <Item render={props.renderItem} item={item} />
              </ItemBoundary>
            </li>
          ))}
        </ul>
      )}
      <div className={props.footerClassName} data-herald-footer="">
        <a href={props.path} className={props.viewAllClassName}>
          {m.viewAll}
        </a>
        <span className={props.poweredByClassName}>
          {m.poweredBy}{' '}
          <a
            href={props.poweredByHref ?? HERALD_URL}
            className={props.poweredByLinkClassName}
            target="_blank"
            rel="noopener noreferrer"
          >
            Herald
          </a>
        </span>
      </div>
    </div>
  );
}
