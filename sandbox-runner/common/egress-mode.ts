/**
 * How the runner's own network use leaves it: a sandboxed command's allow-listed requests and
 * git imports. Every path goes through an allow-list proxy; what differs is where it runs.
 *
 * - `direct` (local stack, CI): the runner has the host's network and runs the proxy itself,
 *   per command (bwrap: on a unix socket, the sandbox's only way out) and per clone.
 * - `proxy` (AWS with the egress component): the runner has no route but to S3 and the egress
 *   proxy (egress/egress-proxy.ts), which enforces the token the harness signed for the request.
 * - `mailbox` (AWS by default): the runner has no route but to S3; each command's allow-listed
 *   requests go through a proxy of its own (isolation/mailbox-proxy.ts) into the workspace's S3
 *   mailbox, answered by the egress forwarder outside the VPC against the harness's grant
 *   (common/egress-mailbox.ts). Git imports have no way out here (the git function does GitHub's git).
 * - `none`: no network at all; a request that needs it fails with `NO_EGRESS`.
 */
export type EgressMode = { kind: 'direct' } | { kind: 'proxy'; url: string } | { kind: 'mailbox' } | { kind: 'none' };

export const NO_EGRESS =
  'This Stratus deployment gives the sandbox no network access: allowed network domains and git imports need its egress proxy, which is off (docs/deploy.md, "Network egress").';

/** Git imports in the `mailbox` mode: the runner's own git has no way out (GitHub runs use the git function). */
export const NO_GIT_EGRESS =
  'This Stratus deployment gives the sandbox runner no network for git: git imports need its egress proxy, which is off; GitHub runs clone through the git function (docs/deploy.md, "Network egress").';

/** Why a git import cannot run in this mode, if it cannot (the harness refuses it up front with this, as the runner would). */
export function gitImportRefusal(kind: EgressMode['kind'] | undefined): string | undefined {
  if (kind === 'none') return NO_EGRESS;
  if (kind === 'mailbox') return NO_GIT_EGRESS;
  return undefined;
}

export const NO_EGRESS_TOKEN =
  'The request carries no egress token for the egress proxy; the harness signs one for every session with allowed network domains.';

/** STRATUS_EGRESS (`direct`, `none`, `mailbox` or `proxy`) and, for `proxy`, STRATUS_EGRESS_PROXY (`http://host:port`). */
export function egressModeFromEnv(kind: string | undefined, proxyUrl: string | undefined): EgressMode {
  switch (kind || 'direct') {
    case 'direct':
      return { kind: 'direct' };
    case 'none':
      return { kind: 'none' };
    case 'mailbox':
      return { kind: 'mailbox' };
    case 'proxy':
      if (!proxyUrl || !/^http:\/\/[^/@]+:\d+$/.test(proxyUrl))
        throw new Error(`STRATUS_EGRESS=proxy needs STRATUS_EGRESS_PROXY=http://host:port, not "${proxyUrl ?? ''}".`);
      return { kind: 'proxy', url: proxyUrl };
    default:
      throw new Error(`STRATUS_EGRESS must be direct, none, mailbox or proxy, not "${kind}".`);
  }
}

/**
 * The proxy URL a sandboxed client uses in `proxy` mode: the egress token is the password (curl,
 * git, pip and npm all send it as Proxy-Authorization; common/egress-token.ts verifies it).
 */
export function proxyUrlWithToken(proxyUrl: string, token: string): string {
  const url = new URL(proxyUrl);
  url.username = 'stratus';
  url.password = token;
  return url.toString().replace(/\/$/, '');
}
