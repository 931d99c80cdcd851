import { describe, expect, it } from 'vitest';
import { SETUP_STATE_TTL_MS, signSetupState, verifySetupState } from '../../../functions/github/setup-state.ts';

describe('GitHub App setup states', () => {
  const now = Date.UTC(2026, 11, 1, 12);

  it('names the tenant and when the link was made, for as long as the link lasts', () => {
    const { state, expiresAt } = signSetupState('whsec', 'acme', now);
    expect(expiresAt).toBe(now + SETUP_STATE_TTL_MS);
    expect(verifySetupState('whsec', state, now + 60_000)).toEqual({ tenantId: 'acme', issuedAt: now, expiresAt });
    expect(verifySetupState('whsec', state, expiresAt)).toEqual({ refused: 'the setup link has expired; ask for a new one' });
  });

  it('refuses a state signed with another secret, altered, truncated, of another version or a webhook signature', () => {
    const { state } = signSetupState('whsec', 'acme', now);
    const [, payload, signature] = state.split('.') as [string, string, string];
    const renamed = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), t: 'victim' })).toString('base64url');
    const refused = { refused: 'the state is not one this deployment made' };
    for (const bad of [
      signSetupState('other', 'acme', now).state,
      `v1.${renamed}.${signature}`,
      `v1.${payload}`,
      `v2.${payload}.${signature}`,
      `v1.${payload}.${signature.slice(1)}`,
      'sha256=00',
      '',
    ]) {
      expect(verifySetupState('whsec', bad, now)).toEqual(refused);
    }
  });
});
