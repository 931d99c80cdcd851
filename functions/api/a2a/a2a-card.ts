import type { AgentCard, AgentSkill } from '@a2a-js/sdk';

/** Where the A2A JSON-RPC endpoint is (POST), behind the same bearer tokens as /v1. */
export const A2A_PATH = '/a2a';
/** Where A2A clients look for an agent's card (the protocol's well-known path). */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** The A2A protocol versions the endpoint answers: 1.0 natively, 0.3's method names (`message/send`, …) through the SDK's compat layer. */
const PROTOCOL_VERSIONS = ['1.0', '0.3'];

const skill = (id: string, name: string, description: string, examples: string[], tags: string[]): AgentSkill => ({
  id,
  name,
  description,
  tags,
  examples,
  inputModes: ['text/plain', 'application/json'],
  outputModes: ['text/plain', 'text/x-diff', 'application/json'],
  securityRequirements: [],
});

const SKILLS: AgentSkill[] = [
  skill(
    'fix-issue',
    'Fix an issue in a repository',
    'Clones a git repository (message metadata `gitUrl`, optional `ref`) into a sandboxed workspace, works on the issue the message describes, and answers with its summary and the diff of what it changed.',
    ['In https://github.com/acme/app, the date picker crashes on leap days: fix it and add a test.'],
    ['coding', 'git', 'bugfix'],
  ),
  skill(
    'run-task',
    'Run a task in a workspace',
    'Runs a coding task in a sandboxed workspace (empty, or seeded with metadata `files`: path → text), running commands and editing files; each further message on the task is another turn in the same workspace.',
    ['Write a script that prints the 20 first primes, run it and show the output.'],
    ['coding', 'shell'],
  ),
];

/**
 * Stratus's agent card: its skills, the JSON-RPC interface at `baseUrl` + /a2a, and the bearer
 * scheme (a tenant token, as for /v1). Streaming and push notifications are on.
 */
export function stratusAgentCard(baseUrl: string, version: string): AgentCard {
  const url = new URL(A2A_PATH, baseUrl).toString();
  return {
    name: 'Stratus',
    description:
      'A self-hostable cloud coding agent: each task is a session with its own sandboxed workspace; it runs commands, edits files and answers with a summary and the workspace diff. Commands and edits may wait for permission (state input-required), answered by the next message.',
    supportedInterfaces: PROTOCOL_VERSIONS.map((protocolVersion) => ({ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion })),
    provider: undefined,
    version,
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { scheme: 'Bearer', bearerFormat: 'Stratus API token', description: 'A tenant API token, the same as for /v1.' },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'text/x-diff', 'application/json'],
    skills: SKILLS,
    signatures: [],
  };
}
