import { z } from 'zod';
import { allowListSchema } from '../../sandbox-runner/common/network-allow-list.ts';

/** The file in a repository that declares its set-up steps (docs/environments.md). */
export const SETUP_FILE = '.stratus/setup.sh';

/** A set-up script longer than this is refused: set-up belongs in a file that installs, not in a setting. */
export const MAX_SETUP_SCRIPT_CHARS = 16_000;

/** The longest a set-up may be given (its runner call must end inside one 15-minute Lambda invocation). */
export const MAX_SETUP_TIMEOUT_SECONDS = 840;

/**
 * How a session's (or a connected repository's) set-up steps run before its first turn. Without
 * `script`, the workspace's `.stratus/setup.sh` runs when it exists; `script` replaces the file;
 * `enabled: false` runs nothing at all.
 */
export const setupSettingsSchema = z.strictObject({
  enabled: z.boolean().optional().describe("false: no set-up steps run, not even the repository's .stratus/setup.sh"),
  script: z
    .string()
    .min(1)
    .max(MAX_SETUP_SCRIPT_CHARS)
    .optional()
    .describe('Bash commands run in the workspace before the first turn, instead of .stratus/setup.sh'),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_SETUP_TIMEOUT_SECONDS)
    .optional()
    .describe("The set-up's time limit (the deployment's STRATUS_SETUP_TIMEOUT_SECONDS when absent)"),
  registries: z
    .strictObject({ add: allowListSchema.optional(), remove: allowListSchema.optional() })
    .optional()
    .describe(
      "Hosts added to or removed from the registries the set-up may reach (the deployment's STRATUS_SETUP_REGISTRIES); the agent's commands never get them",
    ),
});
export type SetupSettings = z.output<typeof setupSettingsSchema>;
