// The organization's configuration (edited as the JSON the API takes) and its API key.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ActionForm, Problem, Section, ShownOnce, useLoad } from '../ui.js';

export function ConfigPage() {
  const config = useLoad(() => api<Record<string, unknown>>('GET', '/organizations/config'), []);
  const [saved, setSaved] = useState(false);
  return (
    <Section title="Configuration">
      <Problem message={config.error} />
      {config.data && (
        <ActionForm label="Save configuration" onSubmit={async (d) => {
          setSaved(false);
          let patch: unknown;
          try {
            patch = JSON.parse(String(d.get('config')));
          } catch (e) {
            throw new Error(`not JSON: ${(e as Error).message}`);
          }
          await api('PATCH', '/organizations/config', patch);
          config.reload();
          setSaved(true);
        }}>
          <div class="field">
            <label for="f-config">Configuration (JSON; the fields given are changed)</label>
            <textarea id="f-config" name="config" rows={18} spellcheck={false} value={JSON.stringify(config.data.result, null, 2)} />
          </div>
        </ActionForm>
      )}
      {saved && <p role="status">Saved.</p>}
    </Section>
  );
}

export function KeysPage() {
  const [key, setKey] = useState<string | undefined>(undefined);
  return (
    <Section title="API key">
      <p>The organization has one API key. Rotating it stops the old key at once, and closes the event streams opened with it.</p>
      <ActionForm label="Rotate API key" confirm="Rotate the API key? Every program using the current key stops working." onSubmit={async () => {
        const { result } = await api<{ api_key: string }>('PUT', '/organizations/api-keys');
        setKey(result.api_key);
      }} />
      {key !== undefined && <ShownOnce label="New API key" value={key} />}
    </Section>
  );
}
