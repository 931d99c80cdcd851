import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a setup link stays good: long enough to pick repositories on GitHub's install page. */
export const SETUP_STATE_TTL_MS = 30 * 60_000;

/**
 * The key setup states are signed with, derived from the webhook secret (HMAC-SHA256 of a fixed
 * label), so the deployment needs no second secret and a state can never pass for a webhook
 * signature or the other way round.
 */
function stateKey(webhookSecret: string): Buffer {
  return createHmac('sha256', webhookSecret).update('stratus github app setup state v1').digest();
}

export interface SetupState {
  tenantId: string;
  /** When the link was made (epoch ms): only an installation created after it can be claimed with it. */
  issuedAt: number;
  expiresAt: number;
}

/** `v1.<payload>.<signature>`: the tenant, when it was made and when it expires, signed. */
export function signSetupState(webhookSecret: string, tenantId: string, now: number): { state: string; expiresAt: number } {
  const expiresAt = now + SETUP_STATE_TTL_MS;
  const payload = Buffer.from(JSON.stringify({ t: tenantId, iat: now, exp: expiresAt, n: randomBytes(9).toString('base64url') })).toString('base64url');
  return { state: `v1.${payload}.${sign(webhookSecret, payload)}`, expiresAt };
}

/** The state's tenant and times, or why it is refused (a forged, altered or expired state). */
export function verifySetupState(webhookSecret: string, state: string, now: number): SetupState | { refused: string } {
  const [version, payload, signature] = state.split('.');
  if (version !== 'v1' || !payload || !signature || state.length > 2_000) return { refused: 'the state is not one this deployment made' };
  const expected = Buffer.from(sign(webhookSecret, payload));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: 'the state is not one this deployment made' };
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { t: string; iat: number; exp: number };
  if (claims.exp <= now) return { refused: 'the setup link has expired; ask for a new one' };
  return { tenantId: claims.t, issuedAt: claims.iat, expiresAt: claims.exp };
}

function sign(webhookSecret: string, payload: string): string {
  return createHmac('sha256', stateKey(webhookSecret)).update(`setup-state.${payload}`).digest('base64url');
}
