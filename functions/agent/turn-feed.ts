import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { errorMessage } from '../shared/errors.ts';
import { EventFeed } from '../shared/event-feed.ts';
import type { Logger } from '../shared/logger.ts';
import type { EventStore, StoredTurnEvent } from '../stores/event-store.ts';
import type { TurnEvent } from '../stores/turn-event.ts';

/** Text deltas arriving within this window are sent and stored as one event. */
export const TEXT_COALESCE_MS = 50;
const TEXT_COALESCE_MAX_CHARS = 4_000;

/**
 * A turn's events, numbered, appended to the event log in order and only then broadcast live to
 * readers in this process: whatever a live client saw, a reconnect (Last-Event-ID) or a follower
 * in another invocation sees too. Consecutive text deltas are coalesced briefly so the log gets
 * a few writes per second, not one per token.
 */
export class TurnFeed {
  readonly live = new EventFeed<StoredTurnEvent>();
  private seq: number;
  private text = '';
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  /** Events numbered but not yet stored: while the store is behind, text keeps coalescing. */
  private unstored = 0;
  /** Someone else wrote this turn's log (it found this turn dead): nothing more goes out. */
  private takenOver = false;

  constructor(
    private readonly events: EventStore,
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
      else this.timer ??= setTimeout(() => this.textTimer(), TEXT_COALESCE_MS);
      return;
    }
    this.flushText();
    this.emit(event);
  }

  /** Flushes what is pending and waits until every event is stored (and sent). */
  async close(): Promise<void> {
    this.flushText();
    await this.writes;
    this.live.close();
  }

  /**
   * Ends the feed with `event` (the turn_end): stored first, then `beforeSend` runs (giving the
   * lease up: a reader that finds the lease gone must find this event in the log), then it is
   * sent, so a client that reacts to it finds the session free.
   */
  async end(event: TurnEvent, beforeSend: () => Promise<void>): Promise<void> {
    this.flushText();
    const stored = this.number(event);
    this.unstored += 1;
    this.writes = this.writes.then(async () => {
      const ok = !this.takenOver && (await this.store(stored));
      this.unstored -= 1;
      await beforeSend();
      if (ok) this.live.push(stored);
    });
    await this.writes;
    this.live.close();
  }

  /** Sending waits for storing, so text that would only queue behind a write waits for the next window. */
  private textTimer(): void {
    this.timer = undefined;
    if (this.unstored > 0) this.timer = setTimeout(() => this.textTimer(), TEXT_COALESCE_MS);
    else this.flushText();
  }

  private flushText(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.text) return;
    const text = this.text;
    this.text = '';
    this.emit({ type: 'text_delta', text });
  }

  private number(event: TurnEvent): StoredTurnEvent {
    return { turnId: this.turnId, seq: this.seq++, event };
  }

  private emit(event: TurnEvent): void {
    const stored = this.number(event);
    this.unstored += 1;
    this.writes = this.writes.then(async () => {
      const ok = !this.takenOver && (await this.store(stored));
      this.unstored -= 1;
      if (ok) this.live.push(stored);
    });
  }

  /** Whether the event is in the log now (only then may anyone see it). */
  private async store(stored: StoredTurnEvent): Promise<boolean> {
    try {
      await this.events.append(this.sessionId, stored);
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return this.numberTaken(stored);
      // Not sent either: the message log stays authoritative, and a live client sees nothing a follower won't.
      this.log.error('could not store a turn event; not sending it', { seq: stored.seq, type: stored.event.type, error: errorMessage(err) });
      return false;
    }
  }

  /**
   * The number is taken: by this very write (a retried request whose first try landed), or by a
   * reader that found this turn dead and ended its log. Then this feed stops, and its live
   * readers get the log's ending instead.
   */
  private async numberTaken(stored: StoredTurnEvent): Promise<boolean> {
    let there: StoredTurnEvent | undefined;
    try {
      [there] = await this.events.listAfter(this.sessionId, this.turnId, stored.seq - 1, 1);
    } catch (err) {
      this.log.error('could not read back a turn event; not sending it', { seq: stored.seq, error: errorMessage(err) });
      return false;
    }
    if (there?.seq === stored.seq && JSON.stringify(there.event) === JSON.stringify(stored.event)) return true;
    this.takenOver = true;
    this.log.error('this turn was ended by another process (it missed its heartbeats); stopping its events', { seq: stored.seq });
    if (there?.event.type === 'turn_end') this.live.push(there);
    this.live.close();
    return false;
  }
}
