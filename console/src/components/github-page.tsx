import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api.ts';
import { formatCost, timeAgo } from '../format.ts';
import { sessionHref } from '../route.ts';
import { GithubDeliveries } from './github-deliveries.tsx';

type Repository = Schemas['GithubRepository'];
type Installation = Schemas['GithubInstallation'];
type Run = Schemas['GithubRun'];

/** GitHub issue fixing: the tenant's connected repositories (connect, change triggers, disconnect) and what each delivery did. */
export function GithubPage() {
  const [repositories, setRepositories] = useState<Repository[] | null>(null);
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [installations, setInstallations] = useState<Installation[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    const [repos, recent, claimed] = await Promise.all([
      api.GET('/v1/github/repositories'),
      api.GET('/v1/github/runs', { params: { query: { limit: 50 } } }),
      api.GET('/v1/github/installations'),
    ]);
    if (claimed.data) setInstallations(claimed.data.installations);
    if (repos.data) setRepositories(repos.data.repositories);
    else setError(errorText(repos.error, repos.response));
    if (recent.data) setRuns(recent.data.runs);
    else setError(errorText(recent.error, recent.response));
  };
  useEffect(() => void load(), []);
  return (
    <>
      <h1>GitHub</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <InstallPanel installations={installations} />
      <ConnectForm onConnected={load} />
      <h2>Connected repositories</h2>
      {repositories?.length === 0 && <p class="muted">No repository connected yet.</p>}
      {repositories?.map((r) => (
        <RepositoryPanel key={r.repository} repository={r} onChanged={load} onError={setError} />
      ))}
      <h2>Runs</h2>
      {runs?.length === 0 && <p class="muted">No runs yet: label an issue or mention the app in a comment.</p>}
      {runs && runs.length > 0 && <RunsTable runs={runs} />}
      <GithubDeliveries />
    </>
  );
}

/**
 * Step one: install the GitHub App through a link whose signed state names this tenant; GitHub
 * sends the browser back to the API, which claims the installation. Only repositories in a
 * claimed installation can be connected.
 */
function InstallPanel({ installations }: { installations: Installation[] | null }) {
  const [link, setLink] = useState<{ url: string; expiresAt: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const ask = async () => {
    setError(null);
    try {
      setLink(must(await api.POST('/v1/github/installations/setup-url', {})));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section class="panel" aria-labelledby="gh-install">
      <h2 id="gh-install" style="margin-top:0">
        Install the GitHub App
      </h2>
      <p class="muted">
        A repository can be connected once it is in an installation of the App that this tenant claimed: install the App with the link below (GitHub brings you
        back, and the installation is claimed), or ask an admin to assign an existing installation.
      </p>
      {installations && installations.length > 0 && (
        <ul aria-label="Claimed installations">
          {installations.map((i) => (
            <li key={i.installationId}>
              Installation {i.installationId}
              {i.account ? ` on ${i.account}` : ''} <span class="muted">({i.claimedBy === 'admin' ? 'assigned by an admin' : 'installed with a link'})</span>
            </li>
          ))}
        </ul>
      )}
      {installations?.length === 0 && <p class="muted">No installation claimed yet.</p>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {link ? (
        <p>
          <a href={link.url} rel="noreferrer">
            Install the App on GitHub
          </a>{' '}
          <span class="muted">(the link works until {new Date(link.expiresAt).toLocaleTimeString()})</span>
        </p>
      ) : (
        <button type="button" onClick={ask}>
          Get an install link
        </button>
      )}
    </section>
  );
}

function ConnectForm({ onConnected }: { onConnected: () => void }) {
  const [repository, setRepository] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      must(await api.POST('/v1/github/repositories', { body: { repository: repository.trim() } }));
      setRepository('');
      onConnected();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="connect-repo">
      <h2 id="connect-repo" style="margin-top:0">
        Connect a repository
      </h2>
      <label for="gh-repository">Repository (owner/name)</label>
      <input id="gh-repository" value={repository} onInput={(e) => setRepository(e.currentTarget.value)} placeholder="octo-org/app" required />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <button type="submit">Connect</button>
    </form>
  );
}

/** One repository: its triggers (label, mention, bots) are editable in place. */
function RepositoryPanel(props: { repository: Repository; onChanged: () => void; onError: (message: string) => void }) {
  const r = props.repository;
  const [label, setLabel] = useState(r.label);
  const [mention, setMention] = useState(r.mention);
  const [owner, name] = r.repository.split('/') as [string, string];
  const id = `gh-${r.repository.replace(/[^\w-]/g, '-')}`;
  const act = async (fn: () => Promise<{ response: Response; error?: unknown }>) => {
    const result = await fn();
    if (!result.response.ok) props.onError(errorText(result.error, result.response));
    props.onChanged();
  };
  const path = { params: { path: { owner, name } } };
  return (
    <section class="panel" aria-labelledby={id}>
      <h3 id={id} style="margin-top:0">
        {r.repository}
      </h3>
      <div class="row">
        <span>
          <label for={`${id}-label`}>Label that starts a run</label>
          <input id={`${id}-label`} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        </span>
        <span>
          <label for={`${id}-mention`}>Mention that starts a run</label>
          <input id={`${id}-mention`} value={mention} onInput={(e) => setMention(e.currentTarget.value)} />
        </span>
      </div>
      <p class="muted">
        Permission mode: {r.settings.permissionMode ?? 'default'} · bots {r.allowBots ? 'allowed' : 'ignored'} · budget{' '}
        {r.settings.budgets?.maxCostUsd !== undefined ? `$${r.settings.budgets.maxCostUsd}` : 'none'}
      </p>
      <div class="row">
        <button type="button" onClick={() => act(() => api.PATCH('/v1/github/repositories/{owner}/{name}', { ...path, body: { label, mention } }))}>
          Save triggers
        </button>
        <button type="button" onClick={() => act(() => api.DELETE('/v1/github/repositories/{owner}/{name}', path))}>
          Disconnect
        </button>
      </div>
    </section>
  );
}

function RunsTable({ runs }: { runs: Run[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Issue / PR</th>
          <th scope="col">Outcome</th>
          <th scope="col" class="hide-narrow">
            Branch
          </th>
          <th scope="col">Pull request</th>
          <th scope="col" class="hide-narrow">
            Session
          </th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.id}>
            <td title={run.createdAt}>{timeAgo(run.createdAt)}</td>
            <td>
              {run.repository}#{run.number}{' '}
              <span class="muted">
                ({run.kind === 'pull_request' ? 'PR' : 'issue'}, {run.trigger} by {run.sender})
              </span>
            </td>
            <td>
              {run.outcome}
              {run.detail && <span class="muted"> {run.detail}</span>}
            </td>
            <td class="hide-narrow">{run.branch ? <code>{run.branch}</code> : '—'}</td>
            <td>
              {run.pullRequestUrl ? (
                <a href={run.pullRequestUrl} rel="noreferrer" target="_blank">
                  {run.pullRequestUrl.replace(/^https:\/\/[^/]+\//, '')}
                </a>
              ) : (
                '—'
              )}
            </td>
            <td class="hide-narrow">{run.sessionId ? <a href={sessionHref(run.sessionId)}>{run.sessionId}</a> : '—'}</td>
            <td>{run.cost ? formatCost(run.cost.usd) : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
