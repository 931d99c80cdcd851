/** What the scripted model server can be told to answer. */
export type ScriptedBlock =
  | { type: 'text'; text: string }
  /** `rawJson` streams these bytes as the input instead of `input` (e.g. JSON cut off by max_tokens). */
  | { type: 'tool_use'; id?: string; name: string; input: unknown; rawJson?: string }
  /** A call of a server tool the provider runs (`web_search`), as the API streams it: its input arrives as JSON deltas. */
  | { type: 'server_tool_use'; id: string; name: string; input: unknown }
  /** The provider's search results for a `server_tool_use` (or `{type: 'web_search_tool_result_error', error_code}`), sent whole at its block's start. */
  | { type: 'web_search_tool_result'; tool_use_id: string; content: unknown };

export interface ScriptedMessage {
  content: ScriptedBlock[];
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  /** Pause between stream events, to hold a turn open (e.g. to observe a 409). */
  delayMs?: number;
  /** Pause before the stream starts: the model's time to its first token, which work beside the request overlaps. */
  thinkMs?: number;
  /** Drop the connection after this many stream events (a stream that breaks mid-way). */
  breakAfterEvents?: number;
  /**
   * Fail the stream after this many events, as the API does once a stream has started: an SSE
   * `error` event (Anthropic) or an exception frame (Bedrock, the exception this error maps to).
   */
  errorAfterEvents?: { after: number; status: number; type: string; message: string };
}

export interface ScriptedError {
  error: { status: number; type: string; message: string };
}

/**
 * A queued response with `forFirstText` is taken only by a request whose first user text starts
 * with it (the queue keeps its order otherwise): a test with agents running at once (a parent
 * and its background sub-agent) scripts each without depending on which asks first.
 */
export type ScriptedResponse = (ScriptedMessage | ScriptedError) & { forFirstText?: string };

/**
 * The first user text of a request: which agent (a session's prompt, or a sub-agent's) asked.
 * The `<system-reminder>` blocks a harness puts before the prompt (instructions, the date) are
 * not part of it.
 */
export function firstUserText(body: MessagesRequest): string {
  const opening = openingMessage(body);
  return opening ? userText(opening) : '';
}

/** Text the harness adds to a request's opening (reminders, the deferred-tools list), not what any agent was asked. */
function harnessText(text: string): boolean {
  return text.startsWith('<system-reminder>') || text.startsWith('<available-deferred-tools>');
}

function userText(message: MessagesRequest['messages'][number]): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((b) => b.type === 'text' && !harnessText(String(b.text)))
    .map((b) => String(b.text))
    .join('');
}

/**
 * The message a request opens with once the harness's context is left out: the prompt's message,
 * after a leading message that holds only reminders or the deferred-tools list (ToolSearch on).
 */
function openingMessage(body: MessagesRequest): MessagesRequest['messages'][number] | undefined {
  return body.messages.find((m) => userText(m) !== '') ?? body.messages[0];
}

/** The body of a Messages API request, as far as scripts need it. */
export interface MessagesRequest {
  model: string;
  messages: { role: 'user' | 'assistant'; content: string | { type: string; [k: string]: unknown }[] }[];
  system?: unknown;
  tools?: { name: string }[];
  stream?: boolean;
  max_tokens: number;
  [k: string]: unknown;
}

/** Decides the next response from the request (the demo) or from a queue (tests, parity runs). */
export type Brain = (request: MessagesRequest) => ScriptedResponse;

export function isScriptedError(r: ScriptedResponse): r is ScriptedError {
  return 'error' in r;
}
