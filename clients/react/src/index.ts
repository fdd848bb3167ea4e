/**
 * @herald/react: Herald's headless notification bell for React 18 and 19, built on @herald/sdk.
 */
export { CONNECTED_COLOR, DISCONNECTED_COLOR, NotificationBell } from './NotificationBell.js';
export type { BellItem, NotificationBellProps } from './types.js';
export {
  type NotificationItem,
  type Notifications,
  type UseNotificationsOptions,
  useNotifications,
} from './use-notifications.js';
