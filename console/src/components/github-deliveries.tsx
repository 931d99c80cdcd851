import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Schemas } from '../api.ts';
import { timeAgo } from '../format.ts';
import { sessionHref } from '../route.ts';

type Delivery = Schemas['GithubDelivery'];

/** Words for each decision, so a reader does not need the API's vocabulary. */
const DECISION: Record<Delivery['decision'], string> = {
  accepted: 'accepted, running',
  ran: 'ran',
  queued: 'queued into the running run',
  ignored: 'ignored',
  refused: 'refused',
  failed: 'failed',
};

/** The delivery log (`GET /v1/github/deliveries`): every webhook delivery, what became of it and why, a page at a time. */
export function GithubDeliveries() {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = async (cursor?: string) => {
    const page = await api.GET('/v1/github/deliveries', { params: { query: { limit: 25, ...(cursor ? { cursor } : {}) } } });
    if (!page.data) return setError(errorText(page.error, page.response));
    const items = page.data.deliveries;
    setDeliveries((shown) => (cursor && shown ? [...shown, ...items] : items));
    setNext(page.data.nextCursor);
  };
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="gh-deliveries">
      <h2 id="gh-deliveries">Deliveries</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {deliveries?.length === 0 && <p class="muted">No webhook delivery for a connected repository yet.</p>}
      {deliveries && deliveries.length > 0 && (
        <table aria-label="Webhook deliveries">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Issue / PR</th>
              <th scope="col">Decision</th>
              <th scope="col" class="hide-narrow">
                Session
              </th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((d) => (
              <DeliveryRow key={d.deliveryId} delivery={d} />
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          Older deliveries
        </button>
      )}
    </section>
  );
}

function DeliveryRow({ delivery: d }: { delivery: Delivery }) {
  return (
    <tr>
      <td title={d.createdAt}>{timeAgo(d.createdAt)}</td>
      <td>
        <code>{d.action ? `${d.event}.${d.action}` : d.event}</code>
        {d.sender && <span class="muted"> by {d.sender}</span>}
      </td>
      <td>{d.number !== null ? `${d.repository}#${d.number}` : d.repository}</td>
      <td>
        {DECISION[d.decision]}
        {d.outcome && d.decision !== 'ignored' && d.decision !== 'refused' && <span class="muted"> ({d.outcome})</span>}
        {d.reason && <span class="muted"> {d.reason}</span>}
      </td>
      <td class="hide-narrow">{d.sessionId ? <a href={sessionHref(d.sessionId)}>{d.sessionId}</a> : '—'}</td>
    </tr>
  );
}
