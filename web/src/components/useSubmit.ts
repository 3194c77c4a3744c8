/**
 * A form's submit: the default prevented, `busy` while the work runs, the last failure in `error`
 * (shown with ErrorNote) and cleared when the form is sent again.
 * `<form onSubmit={submit.handler(() => data(api.POST(…)).then(done))}>`.
 */
import { useState } from 'preact/hooks';

export interface Submit {
  busy: boolean;
  error: unknown;
  setError: (error: unknown) => void;
  handler: (work: () => Promise<unknown>) => (e: Event) => void;
}

export function useSubmit(): Submit {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return {
    busy,
    error,
    setError,
    handler: (work) => (e) => {
      e.preventDefault();
      setBusy(true);
      setError(null);
      work()
        .catch(setError)
        .finally(() => setBusy(false));
    },
  };
}
