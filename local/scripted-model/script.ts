/** What the scripted model server can be told to answer. */
export type ScriptedBlock =
  | { type: 'text'; text: string }
  /** `rawJson` streams these bytes as the input instead of `input` (e.g. JSON cut off by max_tokens). */
  | { type: 'tool_use'; id?: string; name: string; input: unknown; rawJson?: string };

export interface ScriptedMessage {
  content: ScriptedBlock[];
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  /** Pause between stream events, to hold a turn open (e.g. to observe a 409). */
  delayMs?: number;
  /** Drop the connection after this many stream events (a stream that breaks mid-way). */
  breakAfterEvents?: number;
}

export interface ScriptedError {
  error: { status: number; type: string; message: string };
}

export type ScriptedResponse = ScriptedMessage | ScriptedError;

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
