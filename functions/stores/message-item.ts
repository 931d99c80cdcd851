/**
 * How a message is laid out in its DynamoDB item.
 *
 * Current format: the keys (`sessionId`, `seq`) plus one string attribute, `body`, holding the
 * rest of the message as JSON. A reload reads every message since the last compact boundary, and
 * nested maps and lists cost per value on both sides of a Query (the server encodes them, the
 * SDK parses and converts each one); one string per message costs per message. No query or
 * condition looks inside a message: only the keys are ever addressed.
 *
 * Legacy format (items written before `body` existed): every field of the message as its own
 * attribute, `content` as nested DynamoDB lists and maps. Such items are read as they are and are
 * never rewritten, so sessions from before the change load unchanged.
 */
export const BODY_ATTRIBUTE = 'body';

/** A message's keys: the session's log and the place in it. */
interface MessageKeys {
  sessionId: string;
  seq: number;
}

/** What is stored for a message: its keys and its JSON body. */
export interface MessageItem {
  sessionId: string;
  seq: number;
  body: string;
}

/** The item for a message, and its size as DynamoDB counts it (attribute names and UTF-8 values). */
export function encodeMessageItem<M extends MessageKeys>(message: M): { item: MessageItem; bytes: number } {
  const { sessionId, seq, ...rest } = message;
  const body = JSON.stringify(rest);
  const bytes = 'sessionId'.length + Buffer.byteLength(sessionId) + 'seq'.length + String(seq).length + BODY_ATTRIBUTE.length + Buffer.byteLength(body);
  return { item: { sessionId, seq, body }, bytes };
}

/** A stored item back as a message (`StoredMessage` in message-store.ts), in either format. */
export function decodeMessageItem<M extends MessageKeys>(item: Record<string, unknown>): M {
  const body = item[BODY_ATTRIBUTE];
  if (body === undefined) return item as M;
  if (typeof body !== 'string') throw new Error(`Message ${String(item.sessionId)}#${String(item.seq)}: its body is not a string`);
  return { sessionId: item.sessionId, seq: item.seq, ...(JSON.parse(body) as object) } as M;
}
