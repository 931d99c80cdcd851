import { createPublicKey, createVerify, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface StandInIssue {
  title: string;
  body: string;
  user: { login: string; type: string };
  pull?: { head: { ref: string; sha?: string; repoFullName: string }; base: { ref: string }; draft?: boolean };
}

export interface StandInComment {
  id: number;
  issue: string;
  body: string;
  user: { login: string; type: string };
}

/** A comment on a pull request's diff (a review comment); `inReplyTo` makes it a reply in another's thread. */
export interface StandInReviewComment {
  id: number;
  pull: string;
  reviewId?: number;
  path: string;
  line: number | null;
  diffHunk: string;
  body: string;
  user: { login: string; type: string };
  inReplyTo?: number;
}

/** A check run on a commit, with the log its GitHub Actions job printed. */
export interface StandInCheckRun {
  id: number;
  name: string;
  conclusion: string;
  output?: { title?: string; summary?: string; text?: string };
  log?: string;
}

export interface StandInRepository {
  id: number;
  fullName: string;
  /** The App installation whose repository list holds it (none: only a plain token sees it). */
  installationId?: number;
}

export interface RecordedCall {
  method: string;
  path: string;
  body: unknown;
  auth?: string;
  /** When the call arrived (epoch ms). */
  at: number;
}

/**
 * A local stand-in for the few GitHub REST endpoints Stratus uses, with state: issues and pull
 * requests (PRs are issues, as on GitHub), comments, collaborator permissions, and installation
 * tokens minted for a GitHub App whose JWT it verifies with the App's public key. Every call is
 * recorded; `failNext` makes the next matching call answer an error. Only tokens it issued (or
 * the configured plain token) are accepted, and `isValidToken` lets a git server accept the same.
 */
export async function startGithubApiServer(opts: { appId?: string; appPublicKey?: KeyObject | string; plainToken?: string; installationId?: number }) {
  const calls: RecordedCall[] = [];
  const issues = new Map<string, StandInIssue>();
  const comments = new Map<number, StandInComment>();
  const permissions = new Map<string, string>();
  const tokens = new Map<string, { repositories?: string[]; installationId?: number }>();
  const installations = new Map<number, { account: string; createdAt: string }>();
  const repositories = new Map<number, StandInRepository>();
  const failures: { method: string; path: RegExp; status: number; message: string }[] = [];
  const reviewComments = new Map<number, StandInReviewComment>();
  const reviews = new Map<number, { pull: string; body: string; state: string; user: { login: string; type: string } }>();
  const checkRuns = new Map<string, StandInCheckRun[]>();
  let nextReviewComment = 70_000;
  let nextComment = 9_000;
  let nextNumber = 500;
  const publicKey = typeof opts.appPublicKey === 'string' ? createPublicKey(opts.appPublicKey) : opts.appPublicKey;

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const raw = await readBody(req);
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    const auth = req.headers.authorization;
    calls.push({ method: req.method ?? 'GET', path: url.pathname, body, auth, at: Date.now() });
    const failure = failures.findIndex((f) => f.method === req.method && f.path.test(url.pathname));
    if (failure >= 0) {
      const [f] = failures.splice(failure, 1);
      return json(res, f!.status, { message: f!.message });
    }
    const p = url.pathname;
    let m: RegExpExecArray | null;

    if ((m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(p)) && req.method === 'POST') {
      if (!verifyJwt(auth)) return json(res, 401, { message: 'A JSON web token could not be decoded' });
      const installationId = Number(m[1]);
      // With installations registered, GitHub's rules: only a real one mints, only over its own repositories.
      if (installations.size > 0 && !installations.has(installationId)) return json(res, 404, { message: 'Not Found' });
      const repositories = (body?.repositories as string[] | undefined) ?? undefined;
      if (
        installations.size > 0 &&
        repositories?.some((name) => !reposOf(installationId).some((r) => r.fullName.split('/')[1]!.toLowerCase() === name.toLowerCase()))
      ) {
        return json(res, 422, { message: 'There is at least one repository that does not exist or is not accessible to the parent installation.' });
      }
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      tokens.set(token, { repositories, installationId });
      return json(res, 201, {
        token,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        permissions: body?.permissions ?? {},
        repository_selection: repositories ? 'selected' : 'all',
      });
    }
    if (p === '/app' && req.method === 'GET') {
      if (!verifyJwt(auth)) return json(res, 401, { message: 'A JSON web token could not be decoded' });
      return json(res, 200, { id: Number(opts.appId), slug: 'stratus-test', html_url: `http://${req.headers.host}/apps/stratus-test` });
    }
    if ((m = /^\/app\/installations\/(\d+)$/.exec(p)) && req.method === 'GET') {
      if (!verifyJwt(auth)) return json(res, 401, { message: 'A JSON web token could not be decoded' });
      const installation = installations.get(Number(m[1]));
      if (!installation) return json(res, 404, { message: 'Not Found' });
      return json(res, 200, { id: Number(m[1]), account: { login: installation.account }, created_at: installation.createdAt });
    }
    // Where GitHub redirects a job-log download: a short-lived signed URL, fetched without the token.
    if ((m = /^\/_job-logs\/(\d+)$/.exec(p)) && req.method === 'GET') {
      const log = [...checkRuns.values()].flat().find((r) => r.id === Number(m![1]))?.log;
      if (log === undefined) return json(res, 404, { message: 'Not Found' });
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(log);
    }
    if (!tokenOf(auth)) return json(res, 401, { message: 'Bad credentials' });
    const handled = reviewAndCheckRoutes(req.method ?? 'GET', p, body, res, `http://${req.headers.host}`);
    if (handled) return;

    if (p === '/installation/repositories' && req.method === 'GET') {
      const scope = tokens.get(tokenOf(auth)!);
      if (scope?.installationId === undefined) return json(res, 403, { message: 'Resource not accessible by integration' });
      const visible = reposOf(scope.installationId).filter((r) => !scope.repositories || scope.repositories.includes(r.fullName.split('/')[1]!));
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const slice = visible.slice((page - 1) * perPage, page * perPage);
      if (page * perPage < visible.length)
        res.setHeader('link', `<http://${req.headers.host}/installation/repositories?per_page=${perPage}&page=${page + 1}>; rel="next"`);
      return json(res, 200, { total_count: visible.length, repositories: slice.map(repoJson) });
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)$/.exec(p)) && req.method === 'GET') {
      const found = [...repositories.values()].find((r) => r.fullName.toLowerCase() === `${m![1]}/${m![2]}`.toLowerCase());
      return found ? json(res, 200, repoJson(found)) : json(res, 404, { message: 'Not Found' });
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/.exec(p))) {
      const permission = permissions.get(decodeURIComponent(m[3]!)) ?? 'none';
      return json(res, 200, { permission: permission === 'maintain' ? 'write' : permission, role_name: permission, user: { login: m[3] } });
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/.exec(p))) {
      const comment = comments.get(Number(m[3]));
      if (!comment) return json(res, 404, { message: 'Not Found' });
      if (req.method === 'PATCH') comment.body = String(body?.body ?? '');
      return json(res, 200, commentJson(comment, m[1]!, m[2]!));
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(p))) {
      const key = `${m[1]}/${m[2]}#${m[3]}`.toLowerCase();
      if (!issues.has(key)) return json(res, 404, { message: 'Not Found' });
      if (req.method === 'POST') {
        const comment: StandInComment = { id: nextComment++, issue: key, body: String(body?.body ?? ''), user: { login: 'stratus-app[bot]', type: 'Bot' } };
        comments.set(comment.id, comment);
        return json(res, 201, commentJson(comment, m[1]!, m[2]!));
      }
      return json(
        res,
        200,
        [...comments.values()].filter((c) => c.issue === key).map((c) => commentJson(c, m![1]!, m![2]!)),
      );
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/.exec(p))) {
      const issue = issues.get(`${m[1]}/${m[2]}#${m[3]}`.toLowerCase());
      if (!issue) return json(res, 404, { message: 'Not Found' });
      return json(res, 200, {
        number: Number(m[3]),
        title: issue.title,
        body: issue.body,
        user: issue.user,
        ...(issue.pull ? { pull_request: { url: 'x' } } : {}),
      });
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(p)) && req.method === 'POST') {
      const number = nextNumber++;
      const full = `${m[1]}/${m[2]}`;
      const issue: StandInIssue = {
        title: String(body?.title ?? ''),
        body: String(body?.body ?? ''),
        user: { login: 'stratus-app[bot]', type: 'Bot' },
        pull: { head: { ref: String(body?.head), repoFullName: full }, base: { ref: String(body?.base) }, draft: body?.draft === true },
      };
      issues.set(`${full}#${number}`.toLowerCase(), issue);
      return json(res, 201, pullJson(full, number, issue));
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/.exec(p)) && req.method === 'GET') {
      const issue = issues.get(`${m[1]}/${m[2]}#${m[3]}`.toLowerCase());
      if (!issue?.pull) return json(res, 404, { message: 'Not Found' });
      return json(res, 200, pullJson(`${m[1]}/${m[2]}`, Number(m[3]), issue));
    }
    return json(res, 404, { message: `The stand-in does not implement ${req.method} ${p}` });
  });

  /** Review comments, reviews, replies in review threads, check runs and job logs. */
  function reviewAndCheckRoutes(method: string, p: string, body: Record<string, unknown> | undefined, res: ServerResponse, origin: string): boolean {
    let m: RegExpExecArray | null;
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/comments\/(\d+)$/.exec(p)) && method === 'GET') {
      const c = reviewComments.get(Number(m[3]));
      c ? json(res, 200, reviewCommentJson(c)) : json(res, 404, { message: 'Not Found' });
      return true;
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/reviews\/(\d+)(\/comments)?$/.exec(p)) && method === 'GET') {
      const review = reviews.get(Number(m[4]));
      if (!review) json(res, 404, { message: 'Not Found' });
      else if (m[5]) json(res, 200, [...reviewComments.values()].filter((c) => c.reviewId === Number(m![4])).map(reviewCommentJson));
      else json(res, 200, { id: Number(m[4]), body: review.body, state: review.state, user: review.user });
      return true;
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/comments\/(\d+)\/replies$/.exec(p)) && method === 'POST') {
      const pull = `${m[1]}/${m[2]}#${m[3]}`.toLowerCase();
      const parent = reviewComments.get(Number(m[4]));
      if (!parent || parent.pull !== pull) {
        json(res, 404, { message: 'Not Found' });
        return true;
      }
      const reply: StandInReviewComment = {
        ...parent,
        id: nextReviewComment++,
        body: String(body?.body ?? ''),
        user: { login: 'stratus-app[bot]', type: 'Bot' },
        inReplyTo: parent.id,
      };
      delete reply.reviewId;
      reviewComments.set(reply.id, reply);
      json(res, 201, reviewCommentJson(reply));
      return true;
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/commits\/([^/]+)\/check-runs$/.exec(p)) && method === 'GET') {
      const runs = checkRuns.get(`${m[1]}/${m[2]}@${m[3]}`.toLowerCase()) ?? [];
      json(res, 200, {
        total_count: runs.length,
        check_runs: runs.map((r) => ({
          id: r.id,
          name: r.name,
          status: 'completed',
          conclusion: r.conclusion,
          head_sha: m![3],
          output: { title: null, summary: null, text: null, ...r.output },
        })),
      });
      return true;
    }
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/actions\/jobs\/(\d+)\/logs$/.exec(p)) && method === 'GET') {
      const run = [...checkRuns.values()].flat().find((r) => r.id === Number(m![3]));
      if (run?.log === undefined) json(res, 404, { message: 'Not Found' });
      else {
        res.writeHead(302, { location: `${origin}/_job-logs/${run.id}` });
        res.end();
      }
      return true;
    }
    return false;
  }

  function reviewCommentJson(c: StandInReviewComment) {
    return {
      id: c.id,
      pull_request_review_id: c.reviewId ?? null,
      path: c.path,
      line: c.line,
      original_line: c.line,
      diff_hunk: c.diffHunk,
      body: c.body,
      user: c.user,
      ...(c.inReplyTo !== undefined ? { in_reply_to_id: c.inReplyTo } : {}),
    };
  }

  function verifyJwt(header: string | undefined): boolean {
    const jwt = /^bearer (.+)$/i.exec(header ?? '')?.[1];
    if (!jwt || !publicKey) return false;
    const [h, payload, sig] = jwt.split('.');
    if (!h || !payload || !sig) return false;
    const ok = createVerify('RSA-SHA256').update(`${h}.${payload}`).verify(publicKey, Buffer.from(sig, 'base64url'));
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: string | number; exp?: number };
    return ok && String(claims.iss) === String(opts.appId) && (claims.exp ?? 0) * 1000 > Date.now();
  }

  function reposOf(installationId: number): StandInRepository[] {
    return [...repositories.values()].filter((r) => r.installationId === installationId);
  }

  function repoJson(r: StandInRepository) {
    const [owner, name] = r.fullName.split('/') as [string, string];
    return { id: r.id, full_name: r.fullName, name, owner: { login: owner } };
  }

  function tokenOf(header: string | undefined): string | undefined {
    const token = /^(?:token|bearer) (.+)$/i.exec(header ?? '')?.[1];
    if (!token) return undefined;
    return tokens.has(token) || token === opts.plainToken ? token : undefined;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;

  function commentJson(c: StandInComment, owner: string, repo: string) {
    const number = c.issue.split('#')[1];
    return { id: c.id, body: c.body, user: c.user, html_url: `${url}/${owner}/${repo}/issues/${number}#issuecomment-${c.id}` };
  }

  function pullJson(full: string, number: number, issue: StandInIssue) {
    return {
      number,
      title: issue.title,
      body: issue.body,
      draft: issue.pull!.draft ?? false,
      html_url: `${url}/${full}/pull/${number}`,
      head: { ref: issue.pull!.head.ref, sha: issue.pull!.head.sha ?? '', repo: { full_name: issue.pull!.head.repoFullName } },
      base: { ref: issue.pull!.base.ref, repo: { full_name: full } },
    };
  }

  return {
    url,
    calls,
    issues,
    comments,
    permissions,
    /** Tokens minted, with the repositories each was narrowed to. */
    tokens,
    isValidToken: (token: string) => tokens.has(token) || token === opts.plainToken,
    /** An installation of the App on `account`, made at `createdAt` (default: now). */
    addInstallation(id: number, account: string, createdAt = new Date().toISOString()) {
      installations.set(id, { account, createdAt });
    },
    /** A repository GitHub knows, in an installation's repository list when `installationId` is given. */
    addRepository(repository: StandInRepository) {
      repositories.set(repository.id, { ...repository });
    },
    /** Renames a repository (same id), as its owner can on GitHub. */
    renameRepository(id: number, fullName: string) {
      repositories.get(id)!.fullName = fullName;
    },
    /** Removes a repository (deleted, or transferred away), freeing its name for another. */
    removeRepository(id: number) {
      repositories.delete(id);
    },
    addIssue(repository: string, number: number, issue: StandInIssue) {
      issues.set(`${repository}#${number}`.toLowerCase(), issue);
    },
    /** A comment someone wrote on GitHub (what a mention delivery reports). */
    addComment(repository: string, number: number, comment: { id: number; body: string; login: string }) {
      comments.set(comment.id, {
        id: comment.id,
        issue: `${repository}#${number}`.toLowerCase(),
        body: comment.body,
        user: { login: comment.login, type: 'User' },
      });
    },
    /** A comment a reviewer left on a pull request's diff (in review `reviewId` when given). */
    addReviewComment(repository: string, number: number, c: Omit<StandInReviewComment, 'pull' | 'user' | 'inReplyTo'> & { login: string }) {
      const { login, ...rest } = c;
      reviewComments.set(c.id, { ...rest, pull: `${repository}#${number}`.toLowerCase(), user: { login, type: 'User' } });
    },
    /** A review submitted on a pull request (its comments are added with `addReviewComment`). */
    addReview(repository: string, number: number, review: { id: number; body: string; state: string; login: string }) {
      reviews.set(review.id, {
        pull: `${repository}#${number}`.toLowerCase(),
        body: review.body,
        state: review.state,
        user: { login: review.login, type: 'User' },
      });
    },
    /** The replies posted in the thread of review comment `id`, in order. */
    repliesTo(id: number): StandInReviewComment[] {
      return [...reviewComments.values()].filter((c) => c.inReplyTo === id);
    },
    /** A completed check run on commit `sha`. */
    addCheckRun(repository: string, sha: string, run: StandInCheckRun) {
      const key = `${repository}@${sha}`.toLowerCase();
      checkRuns.set(key, [...(checkRuns.get(key) ?? []), run]);
    },
    /** Comments Stratus wrote (the bot's), in order. */
    commentsOn(repository: string, number: number): StandInComment[] {
      const key = `${repository}#${number}`.toLowerCase();
      return [...comments.values()].filter((c) => c.issue === key && c.user.type === 'Bot');
    },
    pulls(repository: string) {
      return [...issues.entries()]
        .filter(([key, issue]) => key.startsWith(`${repository.toLowerCase()}#`) && issue.pull && issue.user.type === 'Bot')
        .map(([key, issue]) => ({ number: Number(key.split('#')[1]), ...issue }));
    },
    /** The next `method` call whose path matches answers `status`. */
    failNext(method: string, path: RegExp, status: number, message = 'Server Error') {
      failures.push({ method, path, status, message });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type GithubApiServer = Awaited<ReturnType<typeof startGithubApiServer>>;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
