import { useState } from 'preact/hooks';
import { api, must } from '../api.ts';
import { CronPreview } from './cron-preview.tsx';

interface Editable {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  prompt: string;
}

/** Changes a schedule's name, cron, time zone and prompt (PATCH), with the next firings shown as the cron is typed. */
export function ScheduleEditor({ schedule, onDone }: { schedule: Editable; onDone: (saved: boolean) => void }) {
  const [form, setForm] = useState({ name: schedule.name, cron: schedule.cron, timezone: schedule.timezone, prompt: schedule.prompt });
  const [error, setError] = useState<string | null>(null);
  const base = `se-${schedule.id}`;
  const field = (key: keyof typeof form) => ({
    id: `${base}-${key}`,
    value: form[key],
    onInput: (e: { currentTarget: { value: string } }) => setForm({ ...form, [key]: e.currentTarget.value }),
  });
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      must(
        await api.PATCH('/v1/schedules/{id}', {
          params: { path: { id: schedule.id } },
          body: { name: form.name, cron: form.cron.trim(), timezone: form.timezone, prompt: form.prompt },
        }),
      );
      onDone(true);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form onSubmit={save} aria-label={`Edit ${schedule.name}`}>
      <div class="row">
        <div>
          <label for={`${base}-name`}>Name</label>
          <input required {...field('name')} />
        </div>
        <div>
          <label for={`${base}-cron`}>Cron</label>
          <input required aria-describedby={`${base}-help`} {...field('cron')} />
        </div>
        <div>
          <label for={`${base}-timezone`}>Time zone</label>
          <input required {...field('timezone')} />
        </div>
      </div>
      <CronPreview cron={form.cron} timezone={form.timezone} id={`${base}-help`} />
      <label for={`${base}-prompt`}>Prompt</label>
      <textarea required rows={3} {...field('prompt')} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary">
          Save changes
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Delete in two steps (a second, explicit button), so one stray click or tap removes nothing. */
export function DeleteSchedule({ name, onDelete }: { name: string; onDelete: () => void }) {
  const [armed, setArmed] = useState(false);
  if (!armed)
    return (
      <button type="button" onClick={() => setArmed(true)}>
        Delete…
      </button>
    );
  return (
    <>
      <button type="button" class="danger" onClick={onDelete}>
        Delete “{name}” for good
      </button>
      <button type="button" onClick={() => setArmed(false)}>
        Keep it
      </button>
    </>
  );
}
