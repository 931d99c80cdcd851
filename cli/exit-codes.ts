/** Exit codes scripts can rely on (README: the CLI). */
export const EXIT = {
  ok: 0,
  /** The API or the network failed, or a turn ended with an error (model_error, crashed, …). */
  failed: 1,
  /** Bad arguments. */
  usage: 2,
  /** Not logged in, or the token was refused. */
  unauthorized: 3,
  /** No such session, turn or schedule. */
  notFound: 4,
  /** The turn waits for a permission answer (`stratus approve` / `stratus deny`). */
  awaitingPermission: 5,
  /** The turn waits for answers to the agent's questions (`stratus answer`). */
  awaitingAnswer: 6,
} as const;

/** An error that ends the CLI with this exit code and message. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}
