export {
  type CallbackMode,
  callbackBody,
  type DarajaSimulator,
  type NextPush,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  type SimPush,
  type SimulatorOptions,
  startDarajaSimulator,
} from './server.js';
export { resultForPhone, TEST_PHONES } from './test-phones.js';
