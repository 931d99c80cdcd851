import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { allowListSchema } from './network-allow-list.ts';

/**
 * The proof a request to the AWS egress proxy carries of what it may reach. The harness (the
 * API and cron functions, trusted) signs a session's allow-list with a key the runner never
 * sees; the runner passes the token to its commands as the password of their proxy URL. A
 * command can read the token (it runs beside the runner), but the token grants only its own
 * session's list, and no list can be widened without the key. How a command presents the
 * token (its proxy URL) is isolation's: common/egress-mode.ts.
 *
 * Format: `v1.<base64url(JSON {d: allowedDomains, s: sessionId, e: expiry ms})>.<base64url(HMAC-SHA256)>`.
 */
export interface EgressGrant {
  allowedDomains: string[];
  sessionId: string;
  /** Epoch ms after which the proxy refuses the token. */
  expiresAt: number;
}

const grantSchema = z.object({ d: allowListSchema, s: z.string().max(256), e: z.number().int() });

export function signEgressToken(key: string, grant: EgressGrant): string {
  const payload = Buffer.from(JSON.stringify({ d: grant.allowedDomains, s: grant.sessionId, e: grant.expiresAt })).toString('base64url');
  return `v1.${payload}.${mac(key, payload)}`;
}

export type EgressTokenCheck = { ok: true; grant: EgressGrant } | { ok: false; reason: string };

export function verifyEgressToken(key: string, token: string, now: number): EgressTokenCheck {
  const [version, payload, signature, ...rest] = token.split('.');
  if (version !== 'v1' || !payload || !signature || rest.length > 0) return { ok: false, reason: 'malformed token' };
  const expected = Buffer.from(mac(key, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'bad signature' };
  let parsed: z.infer<typeof grantSchema>;
  try {
    parsed = grantSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    return { ok: false, reason: 'malformed grant' };
  }
  if (parsed.e <= now) return { ok: false, reason: 'expired' };
  return { ok: true, grant: { allowedDomains: parsed.d, sessionId: parsed.s, expiresAt: parsed.e } };
}

function mac(key: string, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}
