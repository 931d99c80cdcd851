import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { DomainProxy } from './domain-proxy.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { createMailboxCa, type MailboxCa } from './mailbox-ca.ts';
import type { MailboxTarget } from './mailbox-client.ts';
import { createMailboxProxyServer } from './mailbox-proxy.ts';

/** The CA bundle's name in the command's /tmp: the CA certificate only, never its key. */
export const CA_BUNDLE_FILE = '.stratus-egress-ca.pem';

/** Workspaces whose CA a runner keeps (Lambda holds one workspace per container; a local runner a few). */
const KEPT_CAS = 8;

/**
 * The variables that make a command's TLS clients trust the mailbox CA: OpenSSL and what uses
 * it (curl, git, Python's ssl), Node (npm), pip and requests, cargo, git.
 */
export function trustVariables(bundlePath: string): Record<string, string> {
  return {
    SSL_CERT_FILE: bundlePath,
    NODE_EXTRA_CA_CERTS: bundlePath,
    PIP_CERT: bundlePath,
    REQUESTS_CA_BUNDLE: bundlePath,
    CARGO_HTTP_CAINFO: bundlePath,
    GIT_SSL_CAINFO: bundlePath,
  };
}

/** One CA per workspace, made on first use and kept in memory (the oldest dropped past KEPT_CAS). */
export function createMailboxCas(): (workspaceId: string) => Promise<MailboxCa> {
  const cas = new Map<string, Promise<MailboxCa>>();
  return (workspaceId) => {
    let ca = cas.get(workspaceId);
    if (!ca) {
      ca = createMailboxCa(workspaceId);
      cas.set(workspaceId, ca);
      ca.catch(() => cas.delete(workspaceId));
      for (const old of cas.keys()) if (cas.size > KEPT_CAS) cas.delete(old);
    }
    return ca;
  };
}

/** What a command's network is in the mailbox mode: its proxy and the CA bundle it must trust. */
export interface CommandMailbox extends DomainProxy {
  /** The loopback URL, when listening on TCP. */
  url?: string;
}

/**
 * Starts one command's mailbox proxy, on `socketPath` (bwrap binds it into the sandbox) or on a
 * loopback port, and writes the CA bundle into the command's tmp dir (`tmpDir/CA_BUNDLE_FILE`).
 */
export async function startCommandMailbox(
  listenOn: { socketPath: string } | { loopback: true },
  cmd: { allowedDomains: string[]; mailbox?: MailboxTarget; tmpDir: string },
  caFor: (workspaceId: string) => Promise<MailboxCa>,
): Promise<CommandMailbox> {
  if (!cmd.mailbox) throw new ToolInputError('This command has no workspace mailbox to send its network requests through.');
  const ca = await caFor(cmd.mailbox.id);
  await fs.writeFile(path.join(cmd.tmpDir, CA_BUNDLE_FILE), ca.certPem, { mode: 0o644 });
  const { server, destroyAll } = createMailboxProxyServer({ allowedDomains: cmd.allowedDomains, mailbox: cmd.mailbox, ca });
  if ('socketPath' in listenOn) await fs.rm(listenOn.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('socketPath' in listenOn) server.listen(listenOn.socketPath, () => resolve());
    else server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    ...(typeof address === 'object' && address ? { url: `http://127.0.0.1:${address.port}` } : {}),
    async close() {
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if ('socketPath' in listenOn) await fs.rm(listenOn.socketPath, { force: true });
    },
  };
}
