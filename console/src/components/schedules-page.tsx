import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../api.ts';
import { formatCost, timeAgo } from '../format.ts';
import { sessionHref } from '../route.ts';
import { CronPreview } from './cron-preview.tsx';
import { DeleteSchedule, ScheduleEditor } from './schedule-editor.tsx';

const listSchedules = () => api.GET('/v1/schedules', { params: { query: { limit: 100 } } });
type Schedule = NonNullable<Awaited<ReturnType<typeof listSchedules>>['data']>['schedules'][number];

/** Scheduled tasks: create one (with its next firings), pause or resume, run now, and each one's firings. */
export function SchedulesPage() {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const load = () => listSchedules().then((r) => (r.data ? setSchedules(r.data.schedules) : setError(errorText(r.error, r.response))));
  useEffect(() => void load(), []);
  const act = async (fn: () => Promise<{ response: Response; error?: unknown }>) => {
    const r = await fn();
    if (!r.response.ok) setError(errorText(r.error, r.response));
    await load();
  };
  return (
    <>
      <h1>Schedules</h1>
      <NewScheduleForm onCreated={load} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {schedules?.length === 0 && <p class="muted">No schedules yet.</p>}
      {schedules?.map((s) => (
        <section key={s.id} class="panel" aria-labelledby={`sc-${s.id}`}>
          <h2 id={`sc-${s.id}`} style="margin-top:0">
            {s.name} <span class="status">{s.enabled ? 'enabled' : 'paused'}</span>
          </h2>
          <p>
            <code>{s.cron}</code> ({s.timezone}) · next: {s.nextRunAt ? new Date(s.nextRunAt).toLocaleString() : '—'} ·{' '}
            {'sessionId' in s.target ? <a href={sessionHref(s.target.sessionId)}>its session</a> : 'a new session per run'}
          </p>
          <pre>{s.prompt}</pre>
          <div class="row">
            <button type="button" onClick={() => act(() => api.PATCH('/v1/schedules/{id}', { params: { path: { id: s.id } }, body: { enabled: !s.enabled } }))}>
              {s.enabled ? 'Pause' : 'Resume'}
            </button>
            <button type="button" onClick={() => act(() => api.POST('/v1/schedules/{id}/run', { params: { path: { id: s.id } } }))}>
              Run now
            </button>
            <button type="button" aria-expanded={editing === s.id} onClick={() => setEditing(editing === s.id ? null : s.id)}>
              Edit
            </button>
            <DeleteSchedule name={s.name} onDelete={() => act(() => api.DELETE('/v1/schedules/{id}', { params: { path: { id: s.id } } }))} />
          </div>
          {editing === s.id && <ScheduleEditor schedule={s} onDone={(saved) => (setEditing(null), saved && void load())} />}
          <Runs schedule={s} />
        </section>
      ))}
    </>
  );
}

function Runs({ schedule }: { schedule: Schedule }) {
  if (schedule.runs.length === 0) return <p class="muted">No firings yet.</p>;
  return (
    <table>
      <caption class="muted" style="text-align:left">
        Firings
      </caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Outcome</th>
          <th scope="col">Session</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {schedule.runs.map(
          (r) =>
            r && (
              <tr key={r.firedAt}>
                <td title={r.firedAt}>{timeAgo(r.firedAt)}</td>
                <td>
                  {r.outcome}
                  {r.error && <span class="error"> {r.error}</span>}
                </td>
                <td>{r.sessionId ? <a href={sessionHref(r.sessionId)}>{r.sessionId}</a> : '—'}</td>
                <td>{formatCost(r.costUsd)}</td>
              </tr>
            ),
        )}
      </tbody>
    </table>
  );
}

function NewScheduleForm({ onCreated }: { onCreated: () => void }) {
  const [form, setForm] = useState({ name: '', cron: '0 9 * * 1-5', timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC', prompt: '' });
  const [error, setError] = useState<string | null>(null);
  const field = (key: keyof typeof form) => ({
    id: `sf-${key}`,
    value: form[key],
    onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [key]: e.currentTarget.value }),
  });
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      must(await api.POST('/v1/schedules', { body: { name: form.name, cron: form.cron.trim(), timezone: form.timezone, prompt: form.prompt } }));
      setForm({ ...form, name: '', prompt: '' });
      onCreated();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="new-schedule">
      <h2 id="new-schedule" style="margin-top:0">
        New schedule
      </h2>
      <div class="row">
        <div>
          <label for="sf-name">Name</label>
          <input required {...field('name')} />
        </div>
        <div>
          <label for="sf-cron">Cron (minute hour day month weekday)</label>
          <input required aria-describedby="cron-help" {...field('cron')} />
        </div>
        <div>
          <label for="sf-timezone">Time zone</label>
          <input required {...field('timezone')} />
        </div>
      </div>
      <CronPreview cron={form.cron} timezone={form.timezone} />
      <label for="sf-prompt">Prompt (runs unattended in a new session each time)</label>
      <textarea required rows={3} {...field('prompt')} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <button type="submit" class="primary">
        Create schedule
      </button>
    </form>
  );
}
