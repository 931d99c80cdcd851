/**
 * A failure the model can act on (a bad path, a missing file, a command that asks for network
 * the deployment has not got); the runner answers it with `{ ok: false, error: { kind: 'tool_error' } }`.
 */
export class ToolInputError extends Error {
  override name = 'ToolInputError';
}
