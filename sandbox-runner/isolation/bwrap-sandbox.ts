import { spawn } from 'node:child_process';
import { existsSync, promises as fs, openSync, closeSync, statSync } from 'node:fs';
import path from 'node:path';
import { VIRTUAL_ROOT } from '../virtual-paths.ts';
import type { Sandbox, SandboxCommand, SandboxOutcome } from './sandbox.ts';

/** The unprivileged identity commands run as inside their user namespace. */
const SANDBOX_UID = 1000;
const SANDBOX_GID = 1000;
const CWD_FILE = '.stratus-cwd';
const OUTPUT_POLL_MS = 100;

/** Host /etc entries a shell, git and TLS need; nothing else of /etc is visible (no shadow, no secrets). */
const ETC_ALLOW = [
  'alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'nsswitch.conf', 'hosts', 'resolv.conf', 'ssl',
  'ca-certificates', 'ca-certificates.conf', 'localtime', 'mime.types', 'bash.bashrc', 'inputrc', 'magic', 'magic.mime',
];

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Hardened bubblewrap. As root, plain bwrap is escapable (LOCAL-STACK.md); these flags close
 * that: a new user namespace mapping an unprivileged uid, no nested user namespaces, every
 * capability dropped, fresh pid/net/ipc/uts namespaces, and a root built from scratch: /usr
 * read-only, a few /etc files, the workspace at /workspace, a private /tmp, nothing else.
 * Killing bwrap kills the pid namespace, so no process outlives its call.
 */
export function createBwrapSandbox(opts: { runtimeDir: string; bwrapPath?: string }): Sandbox {
  const bwrap = opts.bwrapPath ?? 'bwrap';
  const etcDir = path.join(opts.runtimeDir, 'sandbox-etc');
  let etcReady: Promise<void> | undefined;

  return {
    name: 'bwrap',
    async run(cmd: SandboxCommand): Promise<SandboxOutcome> {
      etcReady ??= writeIdentityFiles(etcDir);
      await etcReady;
      await fs.mkdir(path.join(cmd.tmpDir, 'home'), { recursive: true });
      await fs.rm(path.join(cmd.tmpDir, CWD_FILE), { force: true });
      const args = bwrapArgs(cmd, etcDir);
      const started = Date.now();
      const outFd = openSync(cmd.outputFile, 'w');
      const child = spawn(bwrap, args, { stdio: ['ignore', outFd, outFd], detached: true, env: {} });
      closeSync(outFd);

      let timedOut = false;
      let outputLimitHit = false;
      const kill = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer =
        cmd.detachAfterMs === undefined
          ? setTimeout(() => {
              timedOut = true;
              kill();
            }, cmd.timeoutMs)
          : undefined;
      const poll = setInterval(() => {
        if ((statSync(cmd.outputFile, { throwIfNoEntry: false })?.size ?? 0) > cmd.maxOutputBytes) {
          outputLimitHit = true;
          kill();
        }
      }, OUTPUT_POLL_MS);

      const finished = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (c, s) => resolve({ code: c, signal: s }));
      })
        .finally(() => {
          clearTimeout(timer);
          clearInterval(poll);
        })
        .then(async ({ code, signal }): Promise<SandboxOutcome> => {
          const finalCwd = await fs.readFile(path.join(cmd.tmpDir, CWD_FILE), 'utf8').then((s) => s.trim() || undefined, () => undefined);
          return { exitCode: code, signal, timedOut, outputLimitHit, finalCwd, durationMs: Date.now() - started };
        });
      if (cmd.detachAfterMs === undefined) return finished;
      // A command still running after detachAfterMs is left running (a background task): no
      // kill timer from here on, only the output cap.
      let detachTimer: NodeJS.Timeout | undefined;
      const detached = new Promise<SandboxOutcome>((resolve) => {
        detachTimer = setTimeout(() => {
          clearTimeout(timer);
          resolve({ exitCode: null, signal: null, timedOut: false, outputLimitHit: false, durationMs: Date.now() - started, detached: { done: finished, pid: child.pid! } });
        }, cmd.detachAfterMs);
      });
      return Promise.race([finished.finally(() => clearTimeout(detachTimer)), detached]);
    },
  };
}

function bwrapArgs(cmd: SandboxCommand, etcDir: string): string[] {
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
  for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
  // The EXIT trap records where the shell ended up even when the command calls `exit`.
  const script = `trap 'pwd -P >| /tmp/${CWD_FILE} 2>/dev/null' EXIT\neval "$1"`;
  args.push('/bin/bash', '-c', script, 'bash', cmd.command);
  return args;
}

async function writeIdentityFiles(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'passwd'), `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${SANDBOX_UID}:${SANDBOX_GID}:agent:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`);
  await fs.writeFile(path.join(dir, 'group'), `root:x:0:\nagent:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`);
}
