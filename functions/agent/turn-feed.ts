import { errorMessage } from '../shared/errors.ts';
import { EventFeed } from '../shared/event-feed.ts';
import type { Logger } from '../shared/logger.ts';
import type { EventStore, StoredTurnEvent } from '../stores/event-store.ts';
import type { TurnEvent } from './turn-events.ts';

/** Text deltas arriving within this window are sent and stored as one event. */
export const TEXT_COALESCE_MS = 50;
const TEXT_COALESCE_MAX_CHARS = 4_000;

/**
 * A turn's events, numbered, broadcast live to readers in this process and appended to the
 * event log in order, so a client can reconnect (Last-Event-ID) or follow the turn after it
 * moves to another invocation. Consecutive text deltas are coalesced briefly so the log gets
 * a few writes per second, not one per token.
 */
export class TurnFeed {
  readonly live = new EventFeed<StoredTurnEvent>();
  private seq: number;
  private text = '';
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly sessionId: string,
    readonly turnId: string,
    private readonly log: Logger,
    /** A continued turn goes on numbering where the previous invocation stopped. */
    firstSeq = 0,
  ) {
    this.seq = firstSeq;
  }

  get nextSeq(): number {
    return this.seq;
  }

  push(event: TurnEvent): void {
    if (event.type === 'text_delta') {
      this.text += event.text;
      if (this.text.length >= TEXT_COALESCE_MAX_CHARS) this.flushText();
      else this.timer ??= setTimeout(() => this.flushText(), TEXT_COALESCE_MS);
      return;
    }
    this.flushText();
    this.emit(event);
  }

  /** Flushes what is pending and waits until every event is stored. */
  async close(): Promise<void> {
    this.flushText();
    await this.writes;
    this.live.close();
  }

  private flushText(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.text) return;
    const text = this.text;
    this.text = '';
    this.emit({ type: 'text_delta', text });
  }

  private emit(event: TurnEvent): void {
    const stored: StoredTurnEvent = { turnId: this.turnId, seq: this.seq++, event };
    this.live.push(stored);
    this.writes = this.writes.then(() =>
      this.store.append(this.sessionId, stored).catch((err: unknown) => {
        // The message log stays authoritative; a follower may miss this event, a reader of messages won't.
        this.log.error('could not store a turn event', { seq: stored.seq, type: event.type, error: errorMessage(err) });
      }),
    );
  }
}
