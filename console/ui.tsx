// Small pieces every page uses: loading an API answer, a form that reports what the API said, a secret shown once.
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | undefined; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(undefined);
    load().then(
      (d) => live && setData(d),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** The API's refusal, read out by screen readers as it appears. */
export function Problem({ message }: { message: string | undefined }) {
  return message === undefined ? null : <p class="problem" role="alert">{message}</p>;
}

/** A form whose submission is one API call (or a few): the button waits, a refusal is shown beside it. */
export function ActionForm(props: { label: string; onSubmit: (data: FormData) => Promise<unknown>; children?: ComponentChildren; class?: string; confirm?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (props.confirm && !window.confirm(props.confirm)) return;
    const form = e.currentTarget as HTMLFormElement;
    setBusy(true);
    setError(undefined);
    try {
      await props.onSubmit(new FormData(form));
      form.reset();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class={`action ${props.class ?? ''}`} onSubmit={submit}>
      {props.children}
      <button type="submit" disabled={busy}>
        {props.label}
      </button>
      <Problem message={error} />
    </form>
  );
}

export function Field(props: { label: string; name: string; type?: 'text' | 'email' | 'password' | 'url'; required?: boolean; placeholder?: string; value?: string; autocomplete?: string }) {
  const id = `f-${props.name}`;
  // Preact types each input type's attributes apart; one element serves the four kinds here.
  const attrs = { id, name: props.name, type: props.type ?? 'text', required: props.required, placeholder: props.placeholder, value: props.value, autocomplete: props.autocomplete ?? 'off' } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input {...attrs} />
    </div>
  );
}

/** A value shown once (a client secret, a new API key): the API never answers it again. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="once" role="status">
      <p>
        <strong>{label}</strong> — shown once: copy it now, it cannot be read again.
      </p>
      <code class="secret" data-testid="shown-once">
        {value}
      </code>
      <button type="button" onClick={() => navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false))}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export const text = (data: FormData, name: string) => String(data.get(name) ?? '').trim();
