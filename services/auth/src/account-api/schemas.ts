import { Client, INBOX_MAX_DAYS, INBOX_MIN_DAYS } from '@herald/proto';
import { z } from 'zod';
import { Email, MAX_EMAIL_LENGTH } from '../accounts.js';
import { PushKeyFields } from '../keys/push-settings.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';

const password = (min: number) =>
  z
    .string({ error: 'password is required: give the account password' })
    .min(min, `password must be at least ${min} characters: choose a longer passphrase`)
    .max(MAX_PASSWORD_LENGTH, `password must be at most ${MAX_PASSWORD_LENGTH} characters`);

const client = z.enum(Client.options, { error: 'client must be "web" or "mobile"' });
const domain = z.string({
  error:
    'domain must be a string: the origin your web app is served from, such as https://app.example.com',
});

/** `POST /v1/accounts`. */
export const SignupBody = z.strictObject({ email: Email, password: password(MIN_PASSWORD_LENGTH) });
export type SignupBody = z.infer<typeof SignupBody>;

/**
 * `POST /v1/sessions`. The email is not checked as an address here: anything that is not an
 * account's email is simply `invalid_credentials`, like a wrong password.
 */
export const LoginBody = z.strictObject({
  email: z
    .string({ error: 'email is required: give the account email' })
    .trim()
    .toLowerCase()
    .min(1, 'email is required: give the account email')
    .max(MAX_EMAIL_LENGTH, `email must be at most ${MAX_EMAIL_LENGTH} characters`),
  password: password(1),
});
export type LoginBody = z.infer<typeof LoginBody>;

const scope = z.enum(['subscribe', 'dispatch', 'both'], {
  error: 'scope must be "subscribe" (sockets only), "dispatch" (sending only) or "both"',
});
const requireToken = z.boolean({
  error: 'require_token must be true or false: true makes sockets need a recipient token',
});
const allowUnsigned = z.boolean({
  error:
    "allow_unsigned_recipients must be true or false: true opts a web inbox key out of recipient tokens, so anyone with the key and a user's id reads that user's inbox",
});

const webhookPayload = z.boolean({
  error:
    "webhook_payload must be true or false: true puts this key's event payloads into the account's webhook bodies",
});

const inboxDays = z
  .number({
    error: `inbox_days must be a whole number of days from ${INBOX_MIN_DAYS} to ${INBOX_MAX_DAYS} (or null: live events not stored)`,
  })
  .int(`inbox_days must be a whole number of days from ${INBOX_MIN_DAYS} to ${INBOX_MAX_DAYS}`)
  .min(INBOX_MIN_DAYS, `inbox_days must be at least ${INBOX_MIN_DAYS}`)
  .max(INBOX_MAX_DAYS, `inbox_days must be at most ${INBOX_MAX_DAYS}`)
  .nullable();

/** A key's push settings (issue 40): the same schemas, so the same messages, as `key create`. */
const push = {
  push_after_ms: PushKeyFields.push_after_ms.optional(),
  push_ttl_s: PushKeyFields.push_ttl_s.optional(),
  push_title: PushKeyFields.push_title.optional(),
  push_body: PushKeyFields.push_body.optional(),
  push_include_payload: PushKeyFields.push_include_payload.optional(),
};

/** A key's name: its length and characters are checked by keys/key-name.ts, for the CLI too. */
const name = z
  .string({ error: 'name must be a string: what you call the key, such as "checkout backend"' })
  .nullable();

/** `POST /v1/keys`: a Live key. */
export const LiveKeyBody = z.strictObject({
  kind: z
    .literal('live', {
      error: 'kind may only be "live" here: use POST /v1/keys/test for the Test key',
    })
    .optional(),
  client,
  domain: domain.optional(),
  scope: scope.optional(),
  require_token: requireToken.optional(),
  allow_unsigned_recipients: allowUnsigned.optional(),
  inbox_days: inboxDays.optional(),
  webhook_payload: webhookPayload.optional(),
  name: name.optional(),
  ...push,
});
export type LiveKeyBody = z.infer<typeof LiveKeyBody>;

/** `POST /v1/keys/test`: the account's one Test key. */
export const TestKeyBody = z.strictObject({
  client,
  domain: domain.optional(),
  scope: scope.optional(),
  require_token: requireToken.optional(),
  allow_unsigned_recipients: allowUnsigned.optional(),
  inbox_days: inboxDays.optional(),
  webhook_payload: webhookPayload.optional(),
  name: name.optional(),
  ...push,
});
export type TestKeyBody = z.infer<typeof TestKeyBody>;

/** `PUT /v1/keys/:id/domain`. */
export const DomainBody = z.strictObject({ domain });
export type DomainBody = z.infer<typeof DomainBody>;

/** `PUT /v1/keys/:id/name`: empty or null leaves the key unnamed. */
export const NameBody = z.strictObject({ name });
export type NameBody = z.infer<typeof NameBody>;

/** `POST /v1/password-resets`: the token support printed and the new password. */
export const ResetBody = z.strictObject({
  token: z
    .string({ error: 'token is required: the reset token support gave you' })
    .min(1, 'token is required: the reset token support gave you')
    .max(200),
  password: password(MIN_PASSWORD_LENGTH),
});
export type ResetBody = z.infer<typeof ResetBody>;
