/**
 * A screen loaded on first use (a dynamic import per route), so screens beyond the chat do not
 * weigh on the first page load. Each module is fetched once and kept.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote } from './Problem';
import { t } from '../i18n';

export function lazyScreen<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  return function LazyScreen(props: P) {
    const [Screen, setScreen] = useState<ComponentType<P> | null>(() => loaded);
    const [error, setError] = useState<unknown>(null);
    useEffect(() => {
      if (Screen) return;
      pending ??= load().then((c) => (loaded = c));
      pending.then(
        (c) => setScreen(() => c),
        (e: unknown) => {
          pending = null;
          setError(e);
        },
      );
    }, []);
    if (error)
      return (
        <section class="page">
          <ErrorNote error={new Error(t('lazy.failed'))} />
        </section>
      );
    if (!Screen)
      return (
        <p class="loading" aria-busy="true">
          {t('common.loading')}
        </p>
      );
    return <Screen {...props} />;
  };
}
