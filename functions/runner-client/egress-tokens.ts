import { signEgressToken } from '../../sandbox-runner/common/egress-token.ts';
import { cloneAllowListEntry } from '../../sandbox-runner/common/clone-allow-list-entry.ts';
import type { RunnerClient } from './runner-client.ts';

/**
 * Signs each runner request's network policy for the AWS egress proxy (used when the stage
 * enables it). The key stays here, in the harness: the runner and its commands only ever see
 * tokens, each good for one session's own list. A git import is signed for the clone URL's
 * host:port alone, the entry the runner's clone uses; so are a GitHub run's checkout and push.
 *
 * A token outlives the call it was made for by design (a background task keeps its proxy
 * settings), so `ttlMs` bounds how long a leaked token is worth anything.
 */
export function withEgressTokens(client: RunnerClient, opts: { key: string; ttlMs: number; clock: () => number }): RunnerClient {
  return {
    invoke(request) {
      const allowedDomains =
        request.op.type === 'import_git' || request.op.type === 'git_checkout' || request.op.type === 'git_publish'
          ? [cloneAllowListEntry(request.op.url)].filter((e): e is string => e !== undefined)
          : (request.network?.allowedDomains ?? []);
      if (allowedDomains.length === 0) return client.invoke(request);
      const egressToken = signEgressToken(opts.key, { allowedDomains, sessionId: request.sessionId, expiresAt: opts.clock() + opts.ttlMs });
      return client.invoke({ ...request, network: { allowedDomains, egressToken } });
    },
  };
}

/** One hour: longer than any runner call (15 min) and a background task's usual life. */
export const EGRESS_TOKEN_TTL_MS = 60 * 60_000;
