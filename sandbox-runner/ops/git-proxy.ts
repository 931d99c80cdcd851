import { startLoopbackDomainProxy } from '../isolation/domain-proxy.ts';
import { NO_EGRESS, NO_EGRESS_TOKEN, NO_GIT_EGRESS, proxyUrlWithToken } from '../common/egress-mode.ts';
import { cloneAllowListEntry } from '../common/clone-allow-list-entry.ts';
import type { OpContext } from './op-context.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

/**
 * Runs `use` with the proxy the runner's own git goes through for `remoteUrl`: the same
 * allow-list proxy as commands, admitting only the remote's host:port (locally one started for
 * the call; in AWS the egress proxy, with the token the harness signed for that entry).
 */
export async function withGitProxy<T>(ctx: OpContext, remoteUrl: string, use: (proxy: string) => Promise<T>): Promise<T> {
  const egress = ctx.git.egress ?? { kind: 'direct' };
  if (egress.kind === 'none') throw new ToolInputError(NO_EGRESS);
  if (egress.kind === 'mailbox') throw new ToolInputError(NO_GIT_EGRESS);
  if (egress.kind === 'proxy') {
    if (!ctx.request.network.egressToken) throw new ToolInputError(NO_EGRESS_TOKEN);
    return use(proxyUrlWithToken(egress.url, ctx.request.network.egressToken));
  }
  const entry = cloneAllowListEntry(remoteUrl);
  const local = entry ? await startLoopbackDomainProxy([entry], ctx.git.stackEndpoints) : undefined;
  try {
    // Without an entry the URL is unusable, and the git helpers refuse it before any request.
    return await use(local?.url ?? 'http://127.0.0.1:9');
  } finally {
    await local?.close();
  }
}
