import { createNatsUser, natsUserSubjects } from '../nats-users/store.js';
import { type CommandGroup, command } from './command-types.js';

/** `nats-user`: customer backends' NATS users (nats-users/). */
export const natsUserCommands: CommandGroup = {
  'nats-user create': command({
    flags: { account: 'string' },
    required: ['account'],
    synopsis:
      'nats-user create --account ID (a NATS user for a backend: dispatch for that account only)',
    async run(ctx, flags) {
      const created = await createNatsUser(ctx.db(), flags.account ?? '');
      return {
        json: { ...created, subjects: natsUserSubjects(created.account_id) },
        text: [
          `Created NATS user ${created.user} for account ${created.account_id}. Its password, shown once (only its hash is kept):`,
          `  ${created.password}`,
          `It may only request ${natsUserSubjects(created.account_id).join(' and ')} (and read their replies).`,
        ].join('\n'),
      };
    },
  }),
};
