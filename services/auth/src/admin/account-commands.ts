import { createAccount } from '../accounts.js';
import { iso } from '../dates.js';
import { planChangedMessage } from '../invalidation.js';
import { createResetToken } from '../password-resets.js';
import { resolvePlanChange, setSubscription } from '../subscriptions.js';
import { broadcast } from './broadcast.js';
import { type CommandGroup, command } from './command-types.js';

/** `account`: accounts, their plan, and support's password-reset token. */
export const accountCommands: CommandGroup = {
  'account create': command({
    flags: { email: 'string', plan: 'string', until: 'string' },
    required: ['email'],
    synopsis: 'account create --email E [--plan P --until DATE]',
    async run(ctx, flags) {
      // Checked before anything is written: a bad plan leaves no half-made account behind.
      const plan =
        flags.plan === undefined && flags.until === undefined
          ? undefined
          : resolvePlanChange(ctx.catalogue(), flags.plan ?? 'free', flags.until);
      const account = await createAccount(ctx.db(), { email: flags.email ?? '' }, plan);
      return {
        json: {
          id: account.id,
          email: account.email,
          plan: account.plan,
          period_end: iso(account.period_end),
        },
        text: `Created account ${account.id} (${account.email}, plan ${account.plan}${account.period_end ? ` until ${account.period_end.toISOString()}` : ''})`,
      };
    },
  }),

  'account set-plan': command({
    flags: { account: 'string', plan: 'string', until: 'string' },
    required: ['account', 'plan'],
    synopsis:
      'account set-plan --account ID --plan P [--until DATE] (--until required for paid plans)',
    async run(ctx, flags) {
      const change = resolvePlanChange(ctx.catalogue(), flags.plan ?? '', flags.until);
      const sub = await setSubscription(ctx.db(), flags.account ?? '', change);
      const until = iso(sub.period_end);
      const lapsed = sub.period_end !== null && sub.period_end.getTime() <= Date.now();
      const failure = await broadcast(ctx, [planChangedMessage(sub.account_id)]);
      const json = {
        account_id: sub.account_id,
        plan: sub.plan,
        period_end: until,
        broadcast: !failure,
      };
      const text = `Account ${sub.account_id} is on the ${change.plan.name} (${sub.plan}) plan${
        until
          ? `, paid until ${until}${lapsed ? ' (already past: its Live keys are refused)' : ''}`
          : ''
      }`;
      if (failure) {
        return {
          json,
          text: `${text}, but the invalidation broadcast failed`,
          warning: `the plan is stored, but broadcasting the change on NATS failed (${failure}): services may use their cached answers for a few seconds more; check NATS_URL and run the same set-plan again to re-broadcast`,
          exitCode: 1,
        };
      }
      return { json, text: `${text}; services dropped their cached copies` };
    },
  }),

  'account reset-token': command({
    flags: { email: 'string' },
    required: ['email'],
    synopsis:
      'account reset-token --email E (prints a one-time password-reset token; valid 1 hour)',
    async run(ctx, flags) {
      const reset = await createResetToken(ctx.db(), flags.email ?? '', Date.now());
      return {
        json: {
          account_id: reset.account_id,
          token: reset.token,
          expires_at: iso(reset.expires_at),
        },
        text: `Password-reset token for ${flags.email} (valid until ${reset.expires_at.toISOString()}, once): ${reset.token}\nHerald sends no mail: give it to the verified owner, who enters it on the dashboard's reset page.`,
      };
    },
  }),
};
