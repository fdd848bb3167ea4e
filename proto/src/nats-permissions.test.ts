import { describe, expect, it } from 'vitest';
import { billingSubjects } from './billing.js';
import {
  backendPermissions,
  subjectMatches as matches,
  subjectPatterns,
} from './nats-permissions.js';
import { PUSH_API_SUBJECT } from './push.js';
import { PUSHER_APP_SUBJECT, pusherSubjects } from './pusher.js';
import { subjects } from './subjects.js';
import { fanoutSubjects, TOPIC_API_SUBJECT } from './topics.js';
import { WEBHOOK_API_SUBJECT } from './webhooks.js';

const A = '0a0a0a0a-0000-4000-8000-00000000000a';
const R = '0b0b0b0b-0000-4000-8000-00000000000b';

describe('subjectPatterns', () => {
  it('match what the subject builders build, so a permission follows a subject that changes shape', () => {
    const built: Record<keyof typeof subjectPatterns, string> = {
      live: subjects.live(A, R),
      queue: subjects.queue(A, R),
      queued: subjects.queued(A, R),
      recipient: subjects.recipient(A, R),
      dispatch: subjects.dispatch(A),
      dispatchBatch: subjects.dispatchBatch(A),
      liveHolders: subjects.liveHolders(A),
      edgeLive: subjects.edgeLive(R, A),
      authVerify: subjects.authVerify,
      authInvalidate: subjects.authInvalidate,
      status: subjects.status(A),
      statusQuery: subjects.statusQuery,
      refusals: subjects.refusals(A),
      statusTrim: subjects.statusTrim,
      billingNotice: billingSubjects.notice(A),
      inboxStore: subjects.inboxStore(A),
      inboxQuery: subjects.inboxQuery(A),
      inboxExpire: subjects.inboxExpire,
      inboxApi: subjects.inboxQuery(A),
      inboxUnread: subjects.inboxUnread(A, R),
      webhookApi: WEBHOOK_API_SUBJECT,
      pushApi: PUSH_API_SUBJECT,
      topicApi: TOPIC_API_SUBJECT,
      fanout: fanoutSubjects.chunk(A),
      pusherApp: PUSHER_APP_SUBJECT,
      pusherChannel: pusherSubjects.channel(A, '1234567', 'private-App.Models.User.7'),
      pusherTerminate: pusherSubjects.terminate(A, R),
    };
    for (const [name, pattern] of Object.entries(subjectPatterns)) {
      expect(matches(pattern, built[name as keyof typeof subjectPatterns]), name).toBe(true);
    }
    // A single dispatch pattern does not reach a batch (four tokens), nor the reverse.
    expect(matches(subjectPatterns.dispatch, subjects.dispatchBatch(A))).toBe(false);
    // An edge's per-recipient shape reaches the unread notice, never the inbox API's requests.
    expect(matches(subjectPatterns.recipient, subjects.inboxUnread(A, R))).toBe(true);
    expect(matches(subjectPatterns.inboxApi, subjects.inboxStore(A))).toBe(true);
    expect(matches(subjectPatterns.inboxApi, subjects.inboxUnread(A, R))).toBe(false);
    // An edge's per-recipient subscription never reads webhook endpoint operations (secrets).
    expect(matches(subjectPatterns.recipient, WEBHOOK_API_SUBJECT)).toBe(false);
    // Nor push operations (subscriptions' endpoints are bearer capabilities).
    expect(matches(subjectPatterns.recipient, PUSH_API_SUBJECT)).toBe(false);
    // Nor topics' membership, nor a topic event's chunks (issue 44).
    expect(matches(subjectPatterns.recipient, TOPIC_API_SUBJECT)).toBe(false);
    expect(matches(subjectPatterns.recipient, fanoutSubjects.chunk(A))).toBe(false);
    // Refusals (issue 45) are never on the status stream (whose records fire webhooks), and an
    // edge's per-recipient subscription never reads them.
    expect(matches('rt.status.>', subjects.refusals(A))).toBe(false);
    expect(matches(subjectPatterns.recipient, subjects.refusals(A))).toBe(false);
  });

  it("gives a backend only its account's two dispatch subjects, and refuses a bad account id", () => {
    expect(backendPermissions(A).publish.allow).toEqual([
      subjects.dispatch(A),
      subjects.dispatchBatch(A),
    ]);
    expect(backendPermissions(A).subscribe.allow).toEqual(['_INBOX.>']);
    expect(() => backendPermissions('*')).toThrow(/lower-case UUID/);
  });
});
