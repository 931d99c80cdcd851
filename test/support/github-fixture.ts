import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Maintainer', '-c', 'user.email=m@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: gitEnv,
    encoding: 'utf8',
  }).trim();
}

/**
 * A bare repository `{root}/{owner}/{name}.git` with one commit of `files` on `main`, served by
 * the git server over `root`. `pulls` adds pull request heads as `refs/pull/N/head` (commits that
 * are on no branch, as a fork's are); `rejectPushes` installs a pre-receive hook that refuses.
 */
export function makeBareRepo(
  root: string,
  fullName: string,
  files: Record<string, string>,
  opts: { pulls?: Record<number, Record<string, string>>; rejectPushes?: string } = {},
): { dir: string; log(ref: string): string[]; show(ref: string, file: string): string; parent(ref: string): string; rev(ref: string): string | undefined } {
  const work = mkdtempSync(path.join(os.tmpdir(), 'stratus-gh-work-'));
  try {
    git(work, 'init', '-q');
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
      writeFileSync(path.join(work, name), text);
    }
    // Every file given is tracked, even one its .gitignore names.
    git(work, 'add', '-A', '-f');
    git(work, 'commit', '-qm', 'initial');
    const dir = path.join(root, `${fullName}.git`);
    mkdirSync(path.dirname(dir), { recursive: true });
    execFileSync('git', ['clone', '-q', '--bare', work, dir], { env: gitEnv });
    for (const [number, change] of Object.entries(opts.pulls ?? {})) {
      git(work, 'checkout', '-q', '-b', `fork-${number}`, 'main');
      for (const [name, text] of Object.entries(change)) writeFileSync(path.join(work, name), text);
      git(work, 'add', '-A');
      git(work, 'commit', '-qm', `fork change ${number}`);
      git(work, 'push', '-q', dir, `HEAD:refs/pull/${number}/head`);
    }
    if (opts.rejectPushes) {
      const hook = path.join(dir, 'hooks', 'pre-receive');
      writeFileSync(hook, `#!/bin/sh\necho "${opts.rejectPushes}" >&2\nexit 1\n`);
      chmodSync(hook, 0o755);
    }
    const inRepo = (...args: string[]) => execFileSync('git', ['--git-dir', dir, ...args], { env: gitEnv, encoding: 'utf8' }).trim();
    return {
      dir,
      log: (ref) => inRepo('log', '--format=%H %an <%ae> %s', ref).split('\n'),
      show: (ref, file) => inRepo('show', `${ref}:${file}`),
      parent: (ref) => inRepo('rev-parse', `${ref}^`),
      rev: (ref) => {
        try {
          return inRepo('rev-parse', '--verify', '-q', ref);
        } catch {
          return undefined;
        }
      },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type Example = { name: string; examples: Record<string, unknown>[] };
const all = examples as unknown as Example[];

function example(event: string, match: (e: Record<string, unknown>) => boolean): Record<string, unknown> {
  const found = all.find((e) => e.name === event)?.examples.find(match);
  if (!found) throw new Error(`No ${event} example in @octokit/webhooks-examples`);
  return structuredClone(found);
}

export interface RepoRef {
  /** GitHub's repository id (deliveries are routed by it). */
  id: number;
  fullName: string;
  cloneUrl: string;
  defaultBranch?: string;
  installationId?: number;
}

/** Points a sample payload at our repository, issue and sender. */
function adapt(
  payload: Record<string, unknown>,
  repo: RepoRef,
  issue: { number: number; title: string; body?: string; pullRequest?: boolean },
  sender: { login: string; type?: string },
) {
  const [owner, name] = repo.fullName.split('/') as [string, string];
  const repository = payload.repository as Record<string, unknown>;
  Object.assign(repository, { id: repo.id, full_name: repo.fullName, name, clone_url: repo.cloneUrl, default_branch: repo.defaultBranch ?? 'main' });
  Object.assign(repository.owner as object, { login: owner });
  const is = payload.issue as Record<string, unknown>;
  Object.assign(is, { number: issue.number, title: issue.title, body: issue.body ?? '' });
  if (issue.pullRequest) is.pull_request = { url: `https://api.github.com/repos/${repo.fullName}/pulls/${issue.number}` };
  else delete is.pull_request;
  payload.sender = { ...(payload.sender as object), login: sender.login, type: sender.type ?? 'User' };
  payload.installation = { id: repo.installationId ?? 1, node_id: 'x' };
  return payload;
}

/** A real `issues.labeled` sample, adapted. */
export function labeledPayload(
  repo: RepoRef,
  issue: { number: number; title: string; body?: string },
  label: string,
  sender: { login: string; type?: string },
) {
  const payload = adapt(
    example('issues', (e) => e.action === 'labeled'),
    repo,
    issue,
    sender,
  );
  payload.label = { ...(payload.label as object), name: label };
  return payload;
}

/** A real `installation.deleted` sample (the App was uninstalled), for installation `id`. */
export function installationDeletedPayload(id: number) {
  const payload = example('installation', (e) => e.action === 'deleted');
  Object.assign(payload.installation as object, { id });
  return payload;
}

/** A real `issue_comment.created` sample, adapted (on a pull request when `pullRequest`). */
export function commentPayload(
  repo: RepoRef,
  issue: { number: number; title: string; pullRequest?: boolean },
  comment: { id: number; body: string },
  sender: { login: string; type?: string },
) {
  const payload = adapt(
    example('issue_comment', (e) => e.action === 'created'),
    repo,
    issue,
    sender,
  );
  payload.comment = { ...(payload.comment as object), id: comment.id, body: comment.body, user: { login: sender.login, type: sender.type ?? 'User' } };
  return payload;
}

/** Signs a payload with the real library and posts it to the webhook route. */
export async function sendDelivery(
  apiUrl: string,
  secret: string,
  event: string,
  payload: unknown,
  opts: { deliveryId?: string; signature?: string | null } = {},
): Promise<{ status: number; body: unknown; deliveryId: string; ms: number }> {
  const body = JSON.stringify(payload);
  const deliveryId = opts.deliveryId ?? randomUUID();
  const signature = opts.signature === undefined ? await new Webhooks({ secret }).sign(body) : opts.signature;
  const started = performance.now();
  const res = await fetch(`${apiUrl}/v1/github/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': deliveryId,
      'user-agent': 'GitHub-Hookshot/test',
      ...(signature !== null ? { 'x-hub-signature-256': signature } : {}),
    },
    body,
  });
  const text = await res.text();
  const ms = performance.now() - started;
  return { status: res.status, body: text ? JSON.parse(text) : null, deliveryId, ms };
}

/** The outcomes a GitHub run ends in (`GET /v1/github/runs`). */
const FINAL_RUN_OUTCOMES = new Set([
  'awaiting_plan',
  'pr_opened',
  'pr_updated',
  'draft_pr_opened',
  'no_changes',
  'push_rejected',
  'refused',
  'already_running',
  'failed',
  'budget_spent',
  'budget_raised',
  'checks_limit_reached',
]);

/** The run a delivery started, once it has ended; throws naming it when it has not within `timeoutMs`. */
export async function finishedRun(
  api: { request(method: string, path: string): Promise<{ json: any }> },
  deliveryId: string,
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs.find((r: { deliveryId: string }) => r.deliveryId === deliveryId);
    if (run && FINAL_RUN_OUTCOMES.has(run.outcome)) return run;
    if (Date.now() > deadline) throw new Error(`run for ${deliveryId} did not finish: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
