export { callbackBody } from './daraja-wire.js';
export { startDarajaSimulator } from './server.js';
export {
  type CallbackMode,
  type DarajaSimulator,
  type NextPush,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  type SimPush,
  type SimulatorOptions,
} from './simulator-types.js';
export { resultForPhone, TEST_PHONES } from './test-phones.js';
