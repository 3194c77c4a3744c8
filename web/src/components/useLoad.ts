/** Load data for a screen: {value, error, loading, reload}; a newer load wins over an older one. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  value: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
  set: (v: T) => void;
}

export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    setLoading(true);
    fn().then(
      (v) => {
        if (mine !== seq.current) return;
        setValue(v);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== seq.current) return;
        setError(e);
        setLoading(false);
      },
    );
  }, deps);
  useEffect(run, [run]);
  return { value, error, loading, reload: run, set: setValue };
}
