import { randomBytes } from 'node:crypto';

export type IdSource = (prefix: string) => string;

/**
 * Time-ordered ids (`ses_0mh2k3...`): a base36 millisecond timestamp padded to fixed width,
 * then random bytes, so ids sort by creation time in DynamoDB and in listings.
 */
export const createTimeOrderedId: IdSource = (prefix) =>
  `${prefix}_${Date.now().toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
