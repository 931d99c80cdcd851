import { adminClient } from './admin-commands.ts';
import { ok, type Api } from './client.ts';

type Print = (human: string, json: unknown) => void;
type Repository = { repository: string; repositoryId: number | null; installationId: number | null; label: string };

const repoLine = (r: Repository) =>
  `${r.repository.padEnd(40)} id ${r.repositoryId ?? '- (connect again)'}  installation ${r.installationId ?? '-'}  label ${r.label}`;

/**
 * `stratus github install|installations|connect|repos`: the tenant's side of GitHub. `install`
 * prints the App's install link, whose signed state claims the installation for this tenant
 * when GitHub sends the browser back; `connect` then works for repositories in its list.
 */
export function githubCommands(client: () => Api, print: Print) {
  return {
    async install() {
      const link = ok(await client().api.POST('/v1/github/installations/setup-url', {}));
      print(
        `Open this link to install the GitHub App (good until ${link.expiresAt}); the installation is claimed for this tenant when GitHub sends you back:\n${link.url}`,
        link,
      );
    },
    async installations() {
      const { installations } = ok(await client().api.GET('/v1/github/installations'));
      print(
        installations
          .map((i) => `${String(i.installationId).padEnd(12)} ${(i.account ?? '').padEnd(24)} claimed by ${i.claimedBy} ${i.createdAt}`)
          .join('\n') || '(no installations: run `stratus github install`)',
        { installations },
      );
    },
    async connect(repository: string, o: { label?: string; mention?: string }) {
      const made = ok(
        await client().api.POST('/v1/github/repositories', {
          body: { repository, ...(o.label ? { label: o.label } : {}), ...(o.mention ? { mention: o.mention } : {}) },
        }),
      );
      print(repoLine(made), made);
    },
    async repos() {
      const page = ok(await client().api.GET('/v1/github/repositories', { params: { query: { limit: 200 } } }));
      print(page.repositories.map(repoLine).join('\n') || '(no repositories)', page);
    },
  };
}

/** `stratus admin github assign|ls|revoke|connect`: installation claims and connections for a tenant, with the admin token. */
export function adminGithubCommands(url: () => string, adminToken: string | undefined, print: Print) {
  const api = () => adminClient(url(), adminToken);
  return {
    async assign(o: { installation: string; tenant: string }) {
      const claim = ok(await api().POST('/v1/admin/github/installations', { body: { installationId: Number(o.installation), tenantId: o.tenant } }));
      print(`installation ${claim.installationId} (${claim.account ?? '?'}) belongs to tenant ${claim.tenantId}`, claim);
    },
    async list() {
      const page = ok(await api().GET('/v1/admin/github/installations', { params: { query: { limit: 200 } } }));
      print(
        page.installations
          .map((i) => `${String(i.installationId).padEnd(12)} ${i.tenantId.padEnd(20)} ${(i.account ?? '').padEnd(24)} ${i.claimedBy}`)
          .join('\n') || '(no claimed installations)',
        page,
      );
    },
    async revoke(installationId: string) {
      const released = ok(
        await api().DELETE('/v1/admin/github/installations/{installationId}', { params: { path: { installationId: Number(installationId) } } }),
      );
      print(`installation ${released.installationId} no longer belongs to tenant ${released.tenantId}`, released);
    },
    async connect(repository: string, o: { tenant: string }) {
      const made = ok(await api().POST('/v1/admin/github/repositories', { body: { tenantId: o.tenant, repository } }));
      print(repoLine(made), made);
    },
  };
}
