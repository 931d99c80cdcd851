import type { Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { signHookRequest } from '../../hooks/http-hook.ts';
import { createOutboundFetch } from '../../outbound/outbound-fetch.ts';
import { errorMessage, UserError } from '../../shared/errors.ts';
import type { PushNotificationTarget, SessionRecord } from '../../stores/session-store.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';

/** The header the protocol names for the client's token; the client checks it is its own. */
const PUSH_TOKEN_HEADER = 'x-a2a-notification-token';
/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` keyed with the token, as HTTP hooks sign (functions/hooks/http-hook.ts). */
const PUSH_SIGNATURE_HEADER = 'x-stratus-signature';
const PUSH_TIMESTAMP_HEADER = 'x-stratus-timestamp';

/** Webhooks one task may have. */
const MAX_TARGETS = 5;
/** A webhook that does not answer within this is given up on (the task goes on). */
const PUSH_TIMEOUT_MS = 5_000;
/** The token keys the signature: a short one could be guessed. */
const MIN_TOKEN_LENGTH = 16;

/**
 * Records (or replaces, by id) a webhook for the task. Where it may point is the outbound
 * policy's to say, as for hooks: https://, plain http:// or a private address only where the
 * operator allows (STRATUS_PRIVATE_NETWORK_ALLOW), never the stack's own endpoints.
 */
export async function savePushTarget(deps: RemoteDeps, record: SessionRecord, config: TaskPushNotificationConfig): Promise<PushNotificationTarget> {
  if (config.url.length > 2_000) throw new UserError('The push notification url is longer than 2,000 characters.');
  if (config.id && !/^[\w.-]{1,100}$/.test(config.id)) throw new UserError('A push notification config id is 1 to 100 letters, digits, "_", "-" or ".".');
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new UserError(`The push notification url "${config.url.slice(0, 200)}" is not a URL.`);
  }
  const refusal = url.protocol === 'https:' || url.protocol === 'http:' ? deps.outbound.refusalOf(url.toString()) : 'it must be an https:// URL';
  if (refusal) throw new UserError(`The push notification url is refused: ${refusal}.`);
  if (config.token.length < MIN_TOKEN_LENGTH || config.token.length > 500)
    throw new UserError(`A push notification config needs a token of ${MIN_TOKEN_LENGTH} to 500 characters: it keys the notifications' signature.`);
  const target = { id: config.id || deps.newId('push'), url: url.toString(), token: config.token };
  const others = (record.pushNotifications ?? []).filter((t) => t.id !== target.id);
  if (others.length >= MAX_TARGETS) throw new UserError(`A task has at most ${MAX_TARGETS} push notification configs; delete one first.`);
  await deps.sessions.setPushNotifications(record.sessionId, [...others, target]);
  return target;
}

/** A stored webhook as the protocol shows it. */
export function pushConfigOf(taskId: string, target: PushNotificationTarget): TaskPushNotificationConfig {
  return { tenant: '', id: target.id, taskId, url: target.url, token: target.token, authentication: undefined };
}

/**
 * POSTs the task (the SDK's v1 serialization) to each of the session's webhooks, signed, through
 * the outbound policy. A webhook that fails is logged and skipped: the task goes on.
 */
export async function notifyTask(deps: RemoteDeps, record: SessionRecord, task: Task): Promise<void> {
  const targets = record.pushNotifications ?? [];
  if (targets.length === 0) return;
  const { V1PushNotificationSerializer } = await import('@a2a-js/sdk/server');
  const { body, contentType } = new V1PushNotificationSerializer().serialize({ payload: { $case: 'task', value: task } }, task);
  const fetch = createOutboundFetch(deps.outbound, { maxResponseBytes: 64 * 1024 });
  await Promise.all(
    targets.map(async (target) => {
      const timestamp = String(Math.floor(deps.clock() / 1000));
      try {
        const res = await fetch(target.url, {
          method: 'POST',
          headers: {
            'content-type': contentType,
            [PUSH_TOKEN_HEADER]: target.token,
            [PUSH_TIMESTAMP_HEADER]: timestamp,
            [PUSH_SIGNATURE_HEADER]: signHookRequest(target.token, timestamp, body),
          },
          body,
          signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
        });
        await res.body?.cancel();
        if (!res.ok) deps.log.warn('A2A push notification refused', { sessionId: record.sessionId, status: res.status, host: new URL(target.url).host });
      } catch (err) {
        deps.log.warn('A2A push notification failed', { sessionId: record.sessionId, host: new URL(target.url).host, error: errorMessage(err) });
      }
    }),
  );
}
