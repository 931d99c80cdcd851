import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { VIRTUAL_ROOT } from '../common/virtual-paths.ts';
import type { SandboxSpec } from './sandbox.ts';
import { CWD_FILE, sandboxEnv } from './sandbox-env.ts';

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

export const SOCAT = '/usr/bin/socat';
const SANDBOX_PROXY_SOCKET = '/run/stratus-proxy.sock';
export const SANDBOX_PROXY_PORT = 3128;

/** Where a sandbox's proxy listens (a unix socket bwrap binds in) and the CA bundle its command trusts. */
export interface SandboxNetwork {
  proxySocket: string | undefined;
  caBundle: string | undefined;
}

/**
 * bwrap's flags up to the working directory: the namespaces, the root built from scratch, the
 * mounts and the environment; everything of a sandbox but its cwd and its command. A cold
 * command adds `--chdir` and its shell (bwrap-sandbox.ts), a pre-started one the stub that waits
 * for both (warm-bwrap.ts); the two share every other flag by sharing this.
 */
export function sandboxArgs(spec: SandboxSpec, etcDir: string, network: SandboxNetwork): { mounts: string[]; vars: Record<string, string> } {
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
  args.push('--bind', spec.tmpDir, '/tmp', '--bind', spec.workspaceDir, VIRTUAL_ROOT);
  if (network.proxySocket) args.push('--bind', network.proxySocket, SANDBOX_PROXY_SOCKET);
  args.push('--remount-ro', '/');
  const proxy = network.proxySocket ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}` : undefined;
  const vars = sandboxEnv(spec.env, { home: '/tmp/home', tmpDir: '/tmp', proxy, ...(network.caBundle ? { caBundle: network.caBundle } : {}) });
  return { mounts: args, vars };
}

/** bwrap's flags that give the sandbox exactly `vars` as its environment. */
export function envFlags(vars: Record<string, string>): string[] {
  const flags = ['--clearenv'];
  for (const [k, v] of Object.entries(vars)) flags.push('--setenv', k, v);
  return flags;
}

/** The EXIT trap records where the shell ended up even when the command calls `exit`. */
export const CWD_TRAP = `trap 'pwd -P >| /tmp/${CWD_FILE} 2>/dev/null' EXIT\n`;

/**
 * With a network policy, a loopback port inside the sandbox forwards to the proxy's socket. It
 * starts in a subshell so it is no job of the command's shell (a `wait` does not wait for it),
 * and the command starts once the port answers.
 */
export function relayScript(proxySocket: string | undefined): string {
  if (!proxySocket) return '';
  return (
    `(${SOCAT} TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_PROXY_SOCKET} </dev/null >/dev/null 2>&1 &)\n` +
    `for _ in $(seq 200); do (: </dev/tcp/127.0.0.1/${SANDBOX_PROXY_PORT}) 2>/dev/null && break; sleep 0.01; done\n`
  );
}

export async function writeIdentityFiles(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(
    path.join(dir, 'passwd'),
    `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${SANDBOX_UID}:${SANDBOX_GID}:agent:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  );
  await fs.writeFile(path.join(dir, 'group'), `root:x:0:\nagent:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`);
}
