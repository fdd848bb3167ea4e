/**
 * The zod-free part of the topics contract (issue 44): what a client checks before it calls,
 * shared by `topics.ts` (the service side's schemas) and `wire.ts` (the SDK's server helper).
 */

/** A topic's name, per account. */
export const TOPIC_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Most recipients one `PUT` or `DELETE` of members names (the contract's 10,000). */
export const TOPIC_MEMBERS_PER_CALL_MAX = 10_000;
/** Most members one page of `GET …/members` lists. */
export const TOPIC_MEMBERS_PAGE_MAX = 1000;
/** Most recipients one `exclude` names. */
export const TOPIC_EXCLUDE_MAX = 100;
