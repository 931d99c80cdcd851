import { existsSync, promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { VIRTUAL_ROOT } from '../common/virtual-paths.ts';
import { startDomainProxy, type DomainProxy } from './domain-proxy.ts';
import { createCgroupLimiter, DEFAULT_PROCESS_LIMITS, type CgroupLimiter, type CommandCgroup, type ProcessLimits } from './cgroup-limits.ts';
import type { Sandbox, SandboxCommand, SandboxOutcome } from './sandbox.ts';
import { shellInvocation } from './shell-invocation.ts';
import { spawnWatched } from './watched-process.ts';
import { CWD_FILE, sandboxEnv } from './sandbox-env.ts';
import { NO_STACK_ENDPOINTS, type StackEndpoints } from './stack-endpoints.ts';
import type { EgressMode } from '../common/egress-mode.ts';
import { CA_BUNDLE_FILE, createMailboxCas, startCommandMailbox } from './command-mailbox.ts';
import type { MailboxCa } from './mailbox-ca.ts';

/** The unprivileged identity commands run as inside their user namespace. */
const SANDBOX_UID = 1000;
const SANDBOX_GID = 1000;

/** Host /etc entries a shell, git and TLS need; nothing else of /etc is visible (no shadow, no secrets). */
const ETC_ALLOW = [
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'nsswitch.conf',
  'hosts',
  'resolv.conf',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'localtime',
  'mime.types',
  'bash.bashrc',
  'inputrc',
  'magic',
  'magic.mime',
];

const SOCAT = '/usr/bin/socat';
const SANDBOX_PROXY_SOCKET = '/run/stratus-proxy.sock';
export const SANDBOX_PROXY_PORT = 3128;

export interface BwrapSandboxOptions {
  runtimeDir: string;
  bwrapPath?: string;
  /** pids/memory caps per command, enforced with cgroup v1 where writable. @default DEFAULT_PROCESS_LIMITS */
  processLimits?: ProcessLimits;
  /** Refuse to run commands when the caps cannot be enforced (instead of running uncapped). @default false */
  requireProcessLimits?: boolean;
  /** The deployment's own services, which a command's proxy refuses whatever its allow-list says. @default none */
  stackEndpoints?: StackEndpoints;
  /**
   * Where a command's allowed requests go: `direct` (its own allow-list proxy, on the host's
   * network) or `mailbox` (through the workspace's S3 mailbox, as in AWS; mailbox-proxy.ts). @default direct
   */
  egress?: EgressMode;
}

/**
 * Hardened bubblewrap. As root, plain bwrap is escapable (docs/local-stack.md); these flags close
 * that: a new user namespace mapping an unprivileged uid, no nested user namespaces, every
 * capability dropped, fresh pid/net/ipc/uts namespaces, and a root built from scratch: /usr
 * read-only, a few /etc files, the workspace at /workspace, a private /tmp, nothing else.
 * Killing bwrap kills the pid namespace, so no process outlives its call.
 */
export function createBwrapSandbox(opts: BwrapSandboxOptions): Sandbox {
  const bwrap = opts.bwrapPath ?? 'bwrap';
  const processLimits = opts.processLimits ?? DEFAULT_PROCESS_LIMITS;
  const etcDir = path.join(opts.runtimeDir, 'sandbox-etc');
  let etcReady: Promise<void> | undefined;
  let limiterReady: Promise<CgroupLimiter | undefined> | undefined;
  let counter = 0;
  const caFor = createMailboxCas();
  const instance = randomBytes(4).toString('hex');
  const prepare = async (): Promise<CgroupLimiter | undefined> => {
    etcReady ??= writeIdentityFiles(etcDir);
    await etcReady;
    limiterReady ??= createCgroupLimiter(processLimits);
    const limiter = await limiterReady;
    if (!limiter && opts.requireProcessLimits) {
      throw new Error('cgroup v1 pids/memory controllers are not writable here; refusing to run commands without process and memory limits.');
    }
    return limiter;
  };

  return {
    name: 'bwrap',
    async run(cmd: SandboxCommand): Promise<SandboxOutcome> {
      const limiter = await prepare();
      const id = ++counter;
      const proxySocket = path.join(opts.runtimeDir, 'proxy', `${id}.sock`);
      return runCommand(cmd, {
        bwrap,
        etcDir,
        processLimits,
        proxySocket,
        stackEndpoints: opts.stackEndpoints,
        mailboxCas: opts.egress?.kind === 'mailbox' ? caFor : undefined,
        limiter,
        cgroupName: `${instance}-${process.pid}-${id}`,
      });
    },
  };
}

interface CommandSetup {
  bwrap: string;
  etcDir: string;
  processLimits: ProcessLimits;
  /** Where this command's domain proxy listens, should it have an allow-list. */
  proxySocket: string;
  stackEndpoints: StackEndpoints | undefined;
  /** In the mailbox mode: each workspace's CA, for the command's mailbox proxy. */
  mailboxCas: ((workspaceId: string) => Promise<MailboxCa>) | undefined;
  limiter: CgroupLimiter | undefined;
  cgroupName: string;
}

async function runCommand(cmd: SandboxCommand, setup: CommandSetup): Promise<SandboxOutcome> {
  await fs.mkdir(path.join(cmd.tmpDir, 'home'), { recursive: true });
  await fs.rm(path.join(cmd.tmpDir, CWD_FILE), { force: true });
  const proxy = cmd.allowedDomains?.length ? await startCommandProxy(setup, cmd, cmd.allowedDomains) : undefined;
  const args = bwrapArgs(cmd, setup.etcDir, proxy?.socket, proxy?.caBundle);
  const cgroup: CommandCgroup | undefined = await setup.limiter?.create(setup.cgroupName);
  const cleanup = async () => {
    await cgroup?.destroy();
    await proxy?.close();
  };
  let outcome: SandboxOutcome;
  try {
    const command: [string, string[]] = cgroup ? ['/bin/sh', ['-c', cgroup.joinScript, 'sh', setup.bwrap, ...args]] : [setup.bwrap, args];
    outcome = await runInSandbox(command, cmd, () => limitsHit(cgroup, setup.processLimits));
  } catch (err) {
    await cleanup();
    throw err;
  }
  // A command left running in the background keeps its cgroup and proxy until it ends.
  if (outcome.detached) return { ...outcome, detached: { ...outcome.detached, done: outcome.detached.done.finally(cleanup) } };
  await cleanup();
  return outcome;
}

/**
 * The proxy of one command, on a unix socket that bwrap binds into its sandbox: the domain proxy,
 * or in the mailbox mode the mailbox proxy, whose CA bundle the command then trusts (at /tmp).
 */
async function startCommandProxy(
  setup: CommandSetup,
  cmd: SandboxCommand,
  allowedDomains: string[],
): Promise<DomainProxy & { socket: string; caBundle?: string }> {
  if (!existsSync(SOCAT)) throw new Error(`${SOCAT} is needed for allow-listed network access; run scripts/setup.sh.`);
  const socket = setup.proxySocket;
  await fs.mkdir(path.dirname(socket), { recursive: true });
  if (setup.mailboxCas) {
    const mailbox = await startCommandMailbox({ socketPath: socket }, { ...cmd, allowedDomains }, setup.mailboxCas);
    return { socket, caBundle: `/tmp/${CA_BUNDLE_FILE}`, close: () => mailbox.close() };
  }
  const proxy = await startDomainProxy(socket, allowedDomains, setup.stackEndpoints ?? NO_STACK_ENDPOINTS);
  return { socket, close: () => proxy.close() };
}

async function limitsHit(cgroup: CommandCgroup | undefined, processLimits: ProcessLimits): Promise<SandboxOutcome['limitHit']> {
  const hit = await cgroup?.limitHit();
  return hit ? { kind: hit, limit: hit === 'memory' ? processLimits.maxMemoryBytes : processLimits.maxProcesses } : undefined;
}

async function runInSandbox(
  [file, argv]: [string, string[]],
  cmd: SandboxCommand,
  limitHitOf: () => Promise<SandboxOutcome['limitHit']>,
): Promise<SandboxOutcome> {
  const started = Date.now();
  // cwd '/' so not even the runner's own directory leaks into the sandbox's init (/proc/1/environ PWD).
  // A command that may move to the background is never killed for time: it detaches instead.
  const child = spawnWatched(file, argv, {
    env: {},
    cwd: '/',
    outputFile: cmd.outputFile,
    maxOutputBytes: cmd.maxOutputBytes,
    timeoutMs: cmd.detachAfterMs === undefined ? cmd.timeoutMs : undefined,
    stop: cmd.stop,
  });
  const finished = child.finished.then(async ({ code, signal, timedOut, outputLimitHit, interrupted }): Promise<SandboxOutcome> => {
    const durationMs = Date.now() - started;
    // Whatever the shell left running (a `&` job, a daemon) dies with its call.
    child.kill();
    const limitHit = await limitHitOf();
    const finalCwd = await fs.readFile(path.join(cmd.tmpDir, CWD_FILE), 'utf8').then(
      (s) => s.trim() || undefined,
      () => undefined,
    );
    return {
      exitCode: code,
      signal,
      timedOut,
      outputLimitHit,
      finalCwd,
      durationMs,
      ...(limitHit ? { limitHit } : {}),
      ...(interrupted ? { interrupted } : {}),
    };
  });
  if (cmd.detachAfterMs === undefined) return finished;
  return detachAfter(cmd.detachAfterMs, finished, () => ({ done: finished, pid: child.pid! }), started);
}

/**
 * Still running after `ms`: leave the command running as a background task (only the output
 * cap still applies) and answer now.
 */
function detachAfter(
  ms: number,
  finished: Promise<SandboxOutcome>,
  detached: () => NonNullable<SandboxOutcome['detached']>,
  started: number,
): Promise<SandboxOutcome> {
  let detachTimer: NodeJS.Timeout | undefined;
  const early = new Promise<SandboxOutcome>((resolve) => {
    detachTimer = setTimeout(() => {
      resolve({ exitCode: null, signal: null, timedOut: false, outputLimitHit: false, durationMs: Date.now() - started, detached: detached() });
    }, ms);
  });
  return Promise.race([finished.finally(() => clearTimeout(detachTimer)), early]);
}

function bwrapArgs(cmd: SandboxCommand, etcDir: string, proxySocket: string | undefined, caBundle: string | undefined): string[] {
  // biome-ignore format: a flag and its values stay on one line, one kind of isolation per line
  const args = [
    '--unshare-all', '--unshare-user', '--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_GID),
    '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--new-session',
    '--hostname', 'sandbox',
    '--ro-bind', '/usr', '/usr',
    '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin', '--symlink', 'usr/lib', '/lib',
  ];
  if (existsSync('/usr/lib64')) args.push('--symlink', 'usr/lib64', '/lib64');
  for (const name of ETC_ALLOW) {
    const host = path.join('/etc', name);
    if (existsSync(host)) args.push('--ro-bind', host, host);
  }
  args.push('--ro-bind', path.join(etcDir, 'passwd'), '/etc/passwd', '--ro-bind', path.join(etcDir, 'group'), '/etc/group');
  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--bind', cmd.tmpDir, '/tmp', '--bind', cmd.workspaceDir, VIRTUAL_ROOT);
  if (proxySocket) args.push('--bind', proxySocket, SANDBOX_PROXY_SOCKET);
  args.push('--remount-ro', '/');
  args.push('--chdir', cmd.cwd, '--clearenv');
  const proxy = proxySocket ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}` : undefined;
  const env = sandboxEnv(cmd.env, { home: '/tmp/home', tmpDir: '/tmp', proxy, ...(caBundle ? { caBundle } : {}) });
  for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
  // The EXIT trap records where the shell ended up even when the command calls `exit`.
  const trap = `trap 'pwd -P >| /tmp/${CWD_FILE} 2>/dev/null' EXIT\n`;
  // With a network policy, a loopback port inside the sandbox forwards to the proxy's socket. It
  // starts in a subshell so it is no job of the command's shell (a `wait` does not wait for it),
  // and the command starts once the port answers.
  const relay = proxySocket
    ? `(${SOCAT} TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &)\n` +
      `for _ in $(seq 200); do (: </dev/tcp/127.0.0.1/${SANDBOX_PROXY_PORT}) 2>/dev/null && break; sleep 0.01; done\n`
    : '';
  args.push('/bin/bash', ...shellInvocation(`${trap}${relay}`, cmd.command));
  return args;
}

async function writeIdentityFiles(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(
    path.join(dir, 'passwd'),
    `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${SANDBOX_UID}:${SANDBOX_GID}:agent:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  );
  await fs.writeFile(path.join(dir, 'group'), `root:x:0:\nagent:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`);
}
