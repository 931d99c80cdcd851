import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';

export interface GitCloneOptions {
  url: string;
  /** Branch or tag; the remote's default branch when absent. */
  ref?: string;
  /** Commits of history; 0 clones everything. */
  depth: number;
  /** Sent as HTTP basic auth (x-access-token), never written to disk or argv. */
  token?: string;
  /** Plain http:// remotes (a self-hosted server on a private network); https only otherwise. */
  allowHttp: boolean;
  timeoutMs: number;
  /** Scratch directory for git's HOME. */
  scratchDir: string;
  /** The allow-list proxy every request of the clone goes through (`http://[user:token@]host:port`). */
  proxy: string;
}

/** The clone failed for a reason the caller can fix (bad URL, no access, unknown ref). */
export class GitCloneError extends Error {
  override name = 'GitCloneError';
}

/**
 * Clones into an empty directory. Runs in the runner, not the command sandbox (which has no
 * network), so it is locked down instead: no hooks, no system or global config, only http(s)
 * transports (no file://, ssh or ext:: that could reach the runner's own disk or run commands),
 * no submodules, no prompts, a scrubbed environment and a time limit. Its requests go through an
 * allow-list proxy that admits only the clone URL's host and port (and, by the usual rules, no
 * name resolving to a non-public address), so a clone URL cannot probe the runner's network.
 */
export async function gitClone(dest: string, opts: GitCloneOptions): Promise<void> {
  const url = checkedGitUrl(opts.url, opts.allowHttp);
  if (opts.ref !== undefined && !/^[A-Za-z0-9._/-]+$/.test(opts.ref)) throw new GitCloneError(`"${opts.ref}" is not a branch or tag name.`);

  const env = await lockedDownGitEnv({ scratchDir: opts.scratchDir, proxy: opts.proxy, allowHttp: opts.allowHttp, token: opts.token });
  const args = ['clone', '--quiet', '--no-tags', '--single-branch'];
  if (opts.depth > 0) args.push('--depth', String(opts.depth));
  if (opts.ref) args.push('--branch', opts.ref);
  args.push('--', url.toString(), dest);

  const { code, stderr, timedOut } = await runGit(args, env, opts.timeoutMs);
  if (timedOut) throw new GitCloneError(`git clone did not finish within ${opts.timeoutMs / 1000}s.`);
  if (code !== 0) throw new GitCloneError(`git clone failed: ${redactGitOutput(stderr, opts) || `exit code ${code}`}`);
}

/** A clone URL git may use: a URL, over https (http only when allowed), with no credentials in it. */
export function checkedGitUrl(spec: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new GitCloneError(`"${spec}" is not a URL; give an https:// clone URL.`);
  }
  const allowed = allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol))
    throw new GitCloneError(`Only ${allowed.map((p) => `${p}//`).join(' and ')} git URLs are allowed, not ${url.protocol}//.`);
  if (url.username || url.password) throw new GitCloneError('Put credentials in "token", not in the URL.');
  return url;
}

/**
 * The environment every git the runner starts gets: no hooks, no system or global config, only
 * the https transport (and http when allowed), no submodules, no prompts, requests through the
 * allow-list proxy, and the token (if any) as an `http.extraHeader` passed in GIT_CONFIG_*
 * variables, so it is never in argv, a URL or a config file. Command-line config wins over a
 * repository's own, but not every repository setting can be overridden this way: git started
 * here only ever works in a git directory the runner created itself.
 */
export async function lockedDownGitEnv(opts: {
  scratchDir: string;
  proxy: string;
  allowHttp: boolean;
  token?: string;
  extra?: [string, string][];
}): Promise<Record<string, string>> {
  const home = path.join(opts.scratchDir, 'git-home');
  await fs.mkdir(home, { recursive: true });
  const config: [string, string][] = [
    ['core.hooksPath', '/dev/null'],
    ['protocol.allow', 'never'],
    ['protocol.https.allow', 'always'],
    ['protocol.http.allow', opts.allowHttp ? 'always' : 'never'],
    ['submodule.recurse', 'false'],
    ['core.symlinks', 'true'],
    ['core.fsmonitor', 'false'],
    ['http.proxy', opts.proxy],
    ...(opts.extra ?? []),
  ];
  if (opts.token) config.push(['http.extraHeader', `Authorization: Basic ${Buffer.from(`x-access-token:${opts.token}`).toString('base64')}`]);
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/** git's error text without the token or the proxy's egress token. */
export function redactGitOutput(text: string, opts: { token?: string; proxy: string }): string {
  let out = opts.token ? text.split(opts.token).join('***') : text;
  const secret = new URL(opts.proxy).password;
  if (secret) out = out.split(secret).join('***');
  return out.trim();
}

export function runGit(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  cwd = '/',
): Promise<{ code: number | null; stderr: string; stdout: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < 1_048_576) stdout += d;
    });
    let timedOut = false;
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 16_384) stderr += d;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout, timedOut });
    });
  });
}
