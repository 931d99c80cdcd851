import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkedGitUrl, GitCloneError, lockedDownGitEnv, redactGitOutput, runGit } from './git-clone.ts';

/** How the runner's git reaches a remote (the token only ever travels in git's environment). */
export interface GitRemoteOptions {
  url: string;
  token?: string;
  allowHttp: boolean;
  timeoutMs: number;
  scratchDir: string;
  proxy: string;
}

/** A branch name or a ref (`refs/pull/12/head`), as git allows and nothing that reads as an option. */
const REF = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,255}$/;

function checkRemote(opts: GitRemoteOptions, refs: string[]): void {
  checkedGitUrl(opts.url, opts.allowHttp);
  for (const ref of refs) if (!REF.test(ref)) throw new GitCloneError(`"${ref}" is not a branch, ref or commit.`);
}

async function git(opts: GitRemoteOptions, env: Record<string, string>, args: string[], cwd: string, what: string): Promise<string> {
  const out = await runGit(args, env, opts.timeoutMs, cwd);
  if (out.timedOut) throw new GitCloneError(`git ${what} did not finish within ${opts.timeoutMs / 1000}s.`);
  if (out.code !== 0) throw new GitCloneError(`git ${what} failed: ${redactGitOutput(out.stderr, opts) || `exit code ${out.code}`}`);
  return out.stdout.trim();
}

/**
 * Fills an empty directory with one commit of a remote ref (a branch, or a pull request's
 * `refs/pull/N/head`, which `git clone --branch` cannot name) and checks it out as a new local
 * branch. The remote is never recorded (no `origin`, nothing in `.git/config`): the model's
 * commands see a plain repository. Returns the commit.
 */
export async function gitCheckout(dest: string, opts: GitRemoteOptions & { ref: string; branch: string; depth: number }): Promise<string> {
  checkRemote(opts, [opts.ref, opts.branch]);
  const env = await lockedDownGitEnv(opts);
  await git(opts, env, ['init', '-q'], dest, 'init');
  const depth = opts.depth > 0 ? [`--depth=${opts.depth}`] : [];
  await git(opts, env, ['fetch', '-q', '--no-tags', ...depth, '--', opts.url, opts.ref], dest, 'fetch');
  await git(opts, env, ['checkout', '-q', '-B', opts.branch, 'FETCH_HEAD'], dest, 'checkout');
  return git(opts, env, ['rev-parse', 'HEAD'], dest, 'rev-parse');
}

export type PublishOutcome =
  | { changed: false }
  | { changed: true; pushed: true; sha: string; files: string[] }
  | { changed: true; pushed: false; sha: string; files: string[]; error: string };

/**
 * Commits the tree in `workTree` on top of `base` and pushes it to `branch`. The workspace's own
 * `.git` is never used: the model's commands could have put anything in it (an fsmonitor or
 * filter command would run here, outside the sandbox). Instead a git directory the runner makes
 * in its own temp folder fetches `base`, reads the work tree into an index (what `base` tracks
 * stays tracked; `.gitignore` applies to the rest; `.git` is never added), and commits and
 * pushes from there. Nothing changed → no commit.
 */
export async function gitPublish(
  workTree: string,
  opts: GitRemoteOptions & { base: string; branch: string; message: string; author: { name: string; email: string } },
): Promise<PublishOutcome> {
  checkRemote(opts, [opts.base, opts.branch]);
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(opts.base)) throw new GitCloneError(`"${opts.base}" is not a commit id.`);
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'stratus-publish-'));
  try {
    const base = await lockedDownGitEnv({ ...opts, scratchDir: tmp });
    await git(opts, base, ['init', '-q', 'repo'], tmp, 'init');
    const gitDir = path.join(tmp, 'repo', '.git');
    const env = {
      ...base,
      GIT_DIR: gitDir,
      GIT_WORK_TREE: workTree,
      GIT_AUTHOR_NAME: opts.author.name,
      GIT_AUTHOR_EMAIL: opts.author.email,
      GIT_COMMITTER_NAME: opts.author.name,
      GIT_COMMITTER_EMAIL: opts.author.email,
    };
    await git(opts, env, ['fetch', '-q', '--no-tags', '--depth=1', '--', opts.url, opts.base], tmp, 'fetch');
    await git(opts, env, ['read-tree', opts.base], workTree, 'read-tree');
    await git(opts, env, ['add', '-A'], workTree, 'add');
    const tree = await git(opts, env, ['write-tree'], workTree, 'write-tree');
    if (tree === (await git(opts, env, ['rev-parse', `${opts.base}^{tree}`], workTree, 'rev-parse'))) return { changed: false };
    const files = (await git(opts, env, ['diff', '--name-only', opts.base, tree], workTree, 'diff')).split('\n').filter(Boolean);
    const sha = await git(opts, env, ['commit-tree', tree, '-p', opts.base, '-m', opts.message], workTree, 'commit-tree');
    const push = await runGit(['push', '-q', '--', opts.url, `${sha}:refs/heads/${opts.branch}`], env, opts.timeoutMs, tmp);
    if (push.timedOut) return { changed: true, pushed: false, sha, files, error: `git push did not finish within ${opts.timeoutMs / 1000}s.` };
    if (push.code !== 0) return { changed: true, pushed: false, sha, files, error: redactGitOutput(push.stderr, opts) || `git push exited with ${push.code}` };
    return { changed: true, pushed: true, sha, files };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
