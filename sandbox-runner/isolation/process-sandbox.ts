import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isInsideWorkspace, VIRTUAL_ROOT } from '../common/virtual-paths.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { NO_EGRESS, NO_EGRESS_TOKEN, proxyUrlWithToken, type EgressMode } from '../common/egress-mode.ts';
import type { Sandbox, SandboxCommand, SandboxOutcome } from './sandbox.ts';
import { CWD_FILE, sandboxEnv } from './sandbox-env.ts';
import { shellInvocation } from './shell-invocation.ts';
import { spawnWatched } from './watched-process.ts';
import { CA_BUNDLE_FILE, createMailboxCas, startCommandMailbox } from './command-mailbox.ts';
import type { MailboxCa } from './mailbox-ca.ts';

/**
 * For AWS Lambda, where there are no namespaces to build a sandbox from. Isolation there comes
 * from the function itself (one tenant's workspace per container, a role that grants nothing,
 * scoped per-invocation credentials); this adds what a process can: a scrubbed environment, a
 * per-user process cap (`ulimit -u`; it works because Lambda runs as a non-root user), the time
 * and output limits, and killing the command's process group when the call ends.
 *
 * `/workspace` must be a symlink (made in the image) to `linkPath`, which this points at the
 * current workspace before each command, so commands see the same paths as under bwrap.
 */
export function createProcessSandbox(opts: {
  linkPath: string;
  maxProcesses?: number;
  /**
   * Where allow-listed requests go. Only `proxy` and `mailbox` can serve them here: a command
   * shares the runner's network, so the list must be enforced outside the function (the AWS
   * egress proxy, or the egress forwarder behind the S3 mailbox: the only destinations the
   * function's network reaches). @default direct
   */
  egress?: EgressMode;
}): Sandbox {
  // The link is one per process: a second command re-pointing it at another workspace would
  // show the first command that workspace's files. Commands therefore run one at a time (Lambda
  // sends a container one invocation at a time anyway; this holds for any other host too).
  const caFor = createMailboxCas();
  let previous: Promise<unknown> = Promise.resolve();
  return {
    name: 'process',
    run(cmd: SandboxCommand): Promise<SandboxOutcome> {
      const turn = previous.then(
        () => runOne(opts, cmd, caFor),
        () => runOne(opts, cmd, caFor),
      );
      previous = turn.catch(() => undefined);
      return turn;
    },
  };
}

type ProcessSandboxOptions = Parameters<typeof createProcessSandbox>[0];

/** Runs one command in the workspace the link points at. */
async function runOne(opts: ProcessSandboxOptions, cmd: SandboxCommand, caFor: (workspaceId: string) => Promise<MailboxCa>): Promise<SandboxOutcome> {
  const network = await networkFor(cmd, opts.egress ?? { kind: 'direct' }, caFor);
  try {
    return await runWithNetwork(opts, cmd, network);
  } finally {
    await network.close?.();
  }
}

async function runWithNetwork(opts: ProcessSandboxOptions, cmd: SandboxCommand, network: CommandNetwork): Promise<SandboxOutcome> {
  await pointLink(opts.linkPath, cmd.workspaceDir);
  await fs.mkdir(path.join(cmd.tmpDir, 'home'), { recursive: true });
  await fs.rm(path.join(cmd.tmpDir, CWD_FILE), { force: true });
  const env = sandboxEnv(cmd.env, { home: path.join(cmd.tmpDir, 'home'), tmpDir: cmd.tmpDir, ...network });
  const limit = opts.maxProcesses ? `ulimit -u ${opts.maxProcesses} 2>/dev/null\n` : '';
  const prelude = `${limit}trap 'pwd >| "${path.join(cmd.tmpDir, CWD_FILE)}" 2>/dev/null' EXIT\n`;
  const cwd = cmd.cwd === VIRTUAL_ROOT ? opts.linkPath : path.join(opts.linkPath, path.posix.relative(VIRTUAL_ROOT, cmd.cwd));
  // bash trusts PWD when it names the same directory, so `pwd` shows the link, not the real path.
  env.PWD = cwd;
  const started = Date.now();
  const child = spawnWatched('/bin/bash', shellInvocation(prelude, cmd.command), {
    env,
    cwd,
    outputFile: cmd.outputFile,
    maxOutputBytes: cmd.maxOutputBytes,
    timeoutMs: cmd.timeoutMs,
    stop: cmd.stop,
  });
  const { code, signal, timedOut, outputLimitHit, interrupted } = await child.finished;
  child.kill();
  const logical = await fs.readFile(path.join(cmd.tmpDir, CWD_FILE), 'utf8').then(
    (s) => s.trim(),
    () => '',
  );
  return {
    exitCode: code,
    signal,
    timedOut,
    outputLimitHit,
    finalCwd: toVirtual(logical, opts.linkPath),
    durationMs: Date.now() - started,
    ...(interrupted ? { interrupted } : {}),
  };
}

/** A command's way out: its proxy URL, the CA bundle it trusts, and what to stop when it ends. */
interface CommandNetwork {
  proxy?: string;
  caBundle?: string;
  close?: () => Promise<void>;
}

/**
 * The network of a command with an allow-list: the egress proxy's URL with the request's token,
 * or a mailbox proxy of its own on loopback; nothing without a list.
 */
async function networkFor(cmd: SandboxCommand, egress: EgressMode, caFor: (workspaceId: string) => Promise<MailboxCa>): Promise<CommandNetwork> {
  if (!cmd.allowedDomains?.length) return {};
  if (egress.kind === 'none') throw new ToolInputError(NO_EGRESS);
  if (egress.kind === 'direct')
    throw new ToolInputError('The process sandbox cannot enforce a network allow-list by itself; run commands under bwrap or through an egress proxy.');
  if (egress.kind === 'mailbox') {
    await fs.mkdir(cmd.tmpDir, { recursive: true });
    const mailbox = await startCommandMailbox({ loopback: true }, { ...cmd, allowedDomains: cmd.allowedDomains }, caFor);
    return { proxy: mailbox.url, caBundle: path.join(cmd.tmpDir, CA_BUNDLE_FILE), close: () => mailbox.close() };
  }
  if (!cmd.egressToken) throw new ToolInputError(NO_EGRESS_TOKEN);
  return { proxy: proxyUrlWithToken(egress.url, cmd.egressToken) };
}

async function pointLink(linkPath: string, target: string): Promise<void> {
  const current = await fs.readlink(linkPath).catch(() => undefined);
  if (current === target) return;
  const tmp = `${linkPath}.${process.pid}.tmp`;
  await fs.rm(tmp, { force: true });
  await fs.mkdir(path.dirname(linkPath), { recursive: true });
  await fs.symlink(target, tmp);
  await fs.rename(tmp, linkPath);
}

function toVirtual(logical: string, linkPath: string): string | undefined {
  if (logical.startsWith('/') && isInsideWorkspace(logical)) return logical;
  if (logical === linkPath) return VIRTUAL_ROOT;
  if (logical.startsWith(`${linkPath}/`)) return path.posix.join(VIRTUAL_ROOT, logical.slice(linkPath.length + 1));
  return logical || undefined;
}
