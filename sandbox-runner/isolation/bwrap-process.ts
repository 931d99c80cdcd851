import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { startDomainProxy, type DomainProxy } from './domain-proxy.ts';
import type { CgroupLimiter, CommandCgroup, ProcessLimits } from './cgroup-limits.ts';
import type { SandboxCommand, SandboxSpec } from './sandbox.ts';
import type { WatchedProcess, WatchOptions } from './watched-process.ts';
import { NO_STACK_ENDPOINTS, type StackEndpoints } from './stack-endpoints.ts';
import { CA_BUNDLE_FILE, startCommandMailbox } from './command-mailbox.ts';
import type { MailboxCa } from './mailbox-ca.ts';
import { SOCAT, type SandboxNetwork } from './bwrap-args.ts';

/** What one bwrap sandbox is started with: the sandbox's shared parts and the names that are its own. */
export interface CommandSetup {
  bwrap: string;
  etcDir: string;
  processLimits: ProcessLimits;
  /** Where this sandbox's domain proxy listens, should it have an allow-list. */
  proxySocket: string;
  stackEndpoints: StackEndpoints | undefined;
  /** In the mailbox mode: each workspace's CA, for the command's mailbox proxy. */
  mailboxCas: ((workspaceId: string) => Promise<MailboxCa>) | undefined;
  limiter: CgroupLimiter | undefined;
  cgroupName: string;
}

/** A bwrap sandbox for one command and what it holds, started cold for it or ahead of it (warm-bwrap.ts). */
export interface SandboxProcess {
  cgroup: CommandCgroup | undefined;
  /** Starts the command in it and watches it against its caps from now on. */
  launch(cmd: SandboxCommand, watch: WatchOptions): WatchedProcess;
  /** Removes the cgroup (killing whatever is left in it) and stops the proxy. */
  release(): Promise<void>;
}

/** What a sandbox holds before bwrap starts: its proxy and cgroup, and how to start bwrap inside that cgroup. */
export interface SandboxHoldings {
  network: SandboxNetwork;
  cgroup: CommandCgroup | undefined;
  release(): Promise<void>;
  /** The program and argv that start bwrap with `args` in the cgroup. */
  command(args: string[]): [string, string[]];
}

export async function acquireHoldings(setup: CommandSetup, spec: SandboxSpec): Promise<SandboxHoldings> {
  const proxy = spec.allowedDomains?.length ? await startCommandProxy(setup, spec, spec.allowedDomains) : undefined;
  let cgroup: CommandCgroup | undefined;
  try {
    cgroup = await setup.limiter?.create(setup.cgroupName);
  } catch (err) {
    await proxy?.close();
    throw err;
  }
  return {
    network: { proxySocket: proxy?.socket, caBundle: proxy?.caBundle },
    cgroup,
    async release() {
      await cgroup?.destroy();
      await proxy?.close();
    },
    command: (args) => (cgroup ? ['/bin/sh', ['-c', cgroup.joinScript, 'sh', setup.bwrap, ...args]] : [setup.bwrap, args]),
  };
}

/**
 * The proxy of one sandbox, on a unix socket that bwrap binds into it: the domain proxy, or in
 * the mailbox mode the mailbox proxy, whose CA bundle the command then trusts (at /tmp).
 */
async function startCommandProxy(
  setup: CommandSetup,
  spec: SandboxSpec,
  allowedDomains: string[],
): Promise<DomainProxy & { socket: string; caBundle?: string }> {
  if (!existsSync(SOCAT)) throw new Error(`${SOCAT} is needed for allow-listed network access; run scripts/setup.sh.`);
  const socket = setup.proxySocket;
  await fs.mkdir(path.dirname(socket), { recursive: true });
  if (setup.mailboxCas) {
    const mailbox = await startCommandMailbox({ socketPath: socket }, { ...spec, allowedDomains }, setup.mailboxCas);
    return { socket, caBundle: `/tmp/${CA_BUNDLE_FILE}`, close: () => mailbox.close() };
  }
  const proxy = await startDomainProxy(socket, allowedDomains, setup.stackEndpoints ?? NO_STACK_ENDPOINTS);
  return { socket, close: () => proxy.close() };
}
