import { existsSync, promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { VIRTUAL_ROOT } from '../workspace/virtual-paths.ts';
import { startDomainProxy, type DomainProxy } from './domain-proxy.ts';
import { createCgroupLimiter, DEFAULT_PROCESS_LIMITS, type CgroupLimiter, type CommandCgroup, type ProcessLimits } from './cgroup-limits.ts';
import type { Sandbox, SandboxCommand, SandboxOutcome } from './sandbox.ts';
import { shellInvocation } from './shell-invocation.ts';
import { spawnWatched } from './watched-process.ts';

/** The unprivileged identity commands run as inside their user namespace. */
const SANDBOX_UID = 1000;
const SANDBOX_GID = 1000;
const CWD_FILE = '.stratus-cwd';

/** Host /etc entries a shell, git and TLS need; nothing else of /etc is visible (no shadow, no secrets). */
const ETC_ALLOW = [
  'alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'nsswitch.conf', 'hosts', 'resolv.conf', 'ssl',
  'ca-certificates', 'ca-certificates.conf', 'localtime', 'mime.types', 'bash.bashrc', 'inputrc', 'magic', 'magic.mime',
];

const SOCAT = '/usr/bin/socat';
const SANDBOX_PROXY_SOCKET = '/run/stratus-proxy.sock';
export const SANDBOX_PROXY_PORT = 3128;

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Hardened bubblewrap. As root, plain bwrap is escapable (docs/local-stack.md); these flags close
 * that: a new user namespace mapping an unprivileged uid, no nested user namespaces, every
 * capability dropped, fresh pid/net/ipc/uts namespaces, and a root built from scratch: /usr
 * read-only, a few /etc files, the workspace at /workspace, a private /tmp, nothing else.
 * Killing bwrap kills the pid namespace, so no process outlives its call.
 */
export function createBwrapSandbox(opts: {
  runtimeDir: string;
  bwrapPath?: string;
  /** pids/memory caps per command, enforced with cgroup v1 where writable. @default DEFAULT_PROCESS_LIMITS */
  processLimits?: ProcessLimits;
  /** Refuse to run commands when the caps cannot be enforced (instead of running uncapped). @default false */
  requireProcessLimits?: boolean;
}): Sandbox {
  const bwrap = opts.bwrapPath ?? 'bwrap';
  const etcDir = path.join(opts.runtimeDir, 'sandbox-etc');
  let etcReady: Promise<void> | undefined;
  let limiterReady: Promise<CgroupLimiter | undefined> | undefined;
  let counter = 0;
  const instance = randomBytes(4).toString('hex');

  return {
    name: 'bwrap',
    async run(cmd: SandboxCommand): Promise<SandboxOutcome> {
      etcReady ??= writeIdentityFiles(etcDir);
      await etcReady;
      limiterReady ??= createCgroupLimiter(opts.processLimits ?? DEFAULT_PROCESS_LIMITS);
      const limiter = await limiterReady;
      if (!limiter && opts.requireProcessLimits) {
        throw new Error('cgroup v1 pids/memory controllers are not writable here; refusing to run commands without process and memory limits.');
      }
      await fs.mkdir(path.join(cmd.tmpDir, 'home'), { recursive: true });
      await fs.rm(path.join(cmd.tmpDir, CWD_FILE), { force: true });
      const name = `${instance}-${process.pid}-${++counter}`;
      let proxy: DomainProxy | undefined;
      let proxySocket: string | undefined;
      if (cmd.allowedDomains?.length) {
        if (!existsSync(SOCAT)) throw new Error(`${SOCAT} is needed for allow-listed network access; run scripts/setup.sh.`);
        proxySocket = path.join(opts.runtimeDir, 'proxy', `${counter}.sock`);
        await fs.mkdir(path.dirname(proxySocket), { recursive: true });
        proxy = await startDomainProxy(proxySocket, cmd.allowedDomains);
      }
      const args = bwrapArgs(cmd, etcDir, proxySocket);
      const cgroup: CommandCgroup | undefined = await limiter?.create(name);
      const cleanup = async () => {
        await cgroup?.destroy();
        await proxy?.close();
      };
      let outcome: SandboxOutcome;
      try {
        outcome = await runIn(cgroup, cmd, args);
      } catch (err) {
        await cleanup();
        throw err;
      }
      // A command left running in the background keeps its cgroup and proxy until it ends.
      if (outcome.detached) return { ...outcome, detached: { ...outcome.detached, done: outcome.detached.done.finally(cleanup) } };
      await cleanup();
      return outcome;
    },
  };

  async function runIn(cgroup: CommandCgroup | undefined, cmd: SandboxCommand, args: string[]): Promise<SandboxOutcome> {
    const started = Date.now();
    const [file, argv] = cgroup ? ['/bin/sh', ['-c', cgroup.joinScript, 'sh', bwrap, ...args]] : [bwrap, args];
    // cwd '/' so not even the runner's own directory leaks into the sandbox's init (/proc/1/environ PWD).
    // A command that may move to the background is never killed for time: it detaches instead.
    const child = spawnWatched(file, argv, {
      env: {}, cwd: '/', outputFile: cmd.outputFile, maxOutputBytes: cmd.maxOutputBytes,
      timeoutMs: cmd.detachAfterMs === undefined ? cmd.timeoutMs : undefined,
    });
    const finished = child.finished.then(async ({ code, signal, timedOut, outputLimitHit }): Promise<SandboxOutcome> => {
      const durationMs = Date.now() - started;
      // Whatever the shell left running (a `&` job, a daemon) dies with its call.
      child.kill();
      const hit = await cgroup?.limitHit();
      const processLimits = opts.processLimits ?? DEFAULT_PROCESS_LIMITS;
      const limitHit = hit ? { kind: hit, limit: hit === 'memory' ? processLimits.maxMemoryBytes : processLimits.maxProcesses } : undefined;
      const finalCwd = await fs.readFile(path.join(cmd.tmpDir, CWD_FILE), 'utf8').then((s) => s.trim() || undefined, () => undefined);
      return { exitCode: code, signal, timedOut, outputLimitHit, finalCwd, durationMs, ...(limitHit ? { limitHit } : {}) };
    });
    if (cmd.detachAfterMs === undefined) return finished;
    // Still running after detachAfterMs: leave it running as a background task (only the output
    // cap still applies) and answer now.
    let detachTimer: NodeJS.Timeout | undefined;
    const detached = new Promise<SandboxOutcome>((resolve) => {
      detachTimer = setTimeout(() => {
        resolve({ exitCode: null, signal: null, timedOut: false, outputLimitHit: false, durationMs: Date.now() - started, detached: { done: finished, pid: child.pid! } });
      }, cmd.detachAfterMs);
    });
    return Promise.race([finished.finally(() => clearTimeout(detachTimer)), detached]);
  }
}

function bwrapArgs(cmd: SandboxCommand, etcDir: string, proxySocket: string | undefined): string[] {
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
  const env: Record<string, string> = {
    ...cmd.env,
    PATH: SANDBOX_PATH,
    HOME: '/tmp/home',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    USER: 'agent',
    SHELL: '/bin/bash',
    TERM: 'dumb',
  };
  if (proxySocket) {
    const url = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
    Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url });
  }
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
  await fs.writeFile(path.join(dir, 'passwd'), `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${SANDBOX_UID}:${SANDBOX_GID}:agent:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`);
  await fs.writeFile(path.join(dir, 'group'), `root:x:0:\nagent:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`);
}
