import type { Message, Part, Role } from '@a2a-js/sdk';

/**
 * The protocol's Role numbers (lf.a2a.v1.Role), fixed by its protobuf schema: written here so
 * this file needs only the SDK's types (the SDK itself loads on the first A2A request).
 */
const ROLE_USER = 1 as Role;
const ROLE_AGENT = 2 as Role;

/** A text part (plain text unless `mediaType` says otherwise, e.g. a unified diff). */
export function textPart(text: string, mediaType = 'text/plain'): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType };
}

/** A structured part: JSON the client reads as data. */
export function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

/** A message of the task's conversation, from the agent or from the client (`user`). */
export function taskMessage(taskId: string, messageId: string, role: 'user' | 'agent', parts: Part[], metadata?: Record<string, unknown>): Message {
  return {
    messageId,
    contextId: taskId,
    taskId,
    role: role === 'user' ? ROLE_USER : ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The text parts of a message, joined: what becomes the turn's prompt. */
export function messageText(message: Message): string {
  return message.parts
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
    .join('\n')
    .trim();
}

/** The message's first data part that is a JSON object, if any. */
export function messageData(message: Message): Record<string, unknown> | undefined {
  for (const part of message.parts) {
    const value = part.content?.$case === 'data' ? part.content.value : undefined;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  }
  return undefined;
}
