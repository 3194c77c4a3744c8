/** My account (everyone): my preferences, my API keys (created and shown once, listed, revoked) and my password (when password sign-in is on). */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { loadSignInMethods } from '../../api/session';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CopyButton } from '../../components/CopyButton';
import { formatDate, roleName } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';
import { useSession } from '../../session';
import { Preferences } from './Preferences';
import { PromptLibrary } from './PromptLibrary';
import { t } from '../../i18n';

export function AccountScreen() {
  const { me } = useSession();
  const methods = useLoad(loadSignInMethods, []);
  return (
    <section class="page narrow stack">
      <h1>{t('account.title')}</h1>
      <p class="muted">
        {me.user.name} · {me.user.email} · {t('account.roleOf', { role: roleName(me.user.role), team: me.team.name })}
      </p>
      <Preferences />
      <ApiKeys />
      <PromptLibrary />
      {methods.value?.password && <PasswordForm />}
    </section>
  );
}

function ApiKeys() {
  const keys = useLoad(() => data(api.GET('/api/v1/api-keys')), []);
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<{ name: string; key: string } | null>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="keys-title">
      <h2 id="keys-title">{t('account.keys')}</h2>
      <p class="muted small">{t('account.keysNote')}</p>
      <form
        class="ask-form"
        onSubmit={submit.handler(() =>
          data(api.POST('/api/v1/api-keys', { body: { name: name.trim() } })).then((k) => {
            setFresh({ name: k.name, key: k.key });
            setName('');
            keys.reload();
          }),
        )}
      >
        <label class="grow">
          {t('account.keyName')}
          <input value={name} required maxLength={200} placeholder={t('account.keyNameExample')} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={submit.busy || !name.trim()}>
          {t('account.createKey')}
        </button>
      </form>
      {fresh && (
        <div class="shown-once" role="status" aria-label={t('account.newKey')}>
          <p>
            {t('account.created.before')} <strong>{fresh.name}</strong> {t('account.created.after')}
          </p>
          <p class="secret-line">
            <code>{fresh.key}</code> <CopyButton text={fresh.key} what={t('account.newKeyLower')} />
          </p>
        </div>
      )}
      <ErrorNote error={keys.error ?? submit.error} />
      {keys.value && keys.value.length === 0 && <p class="muted">{t('account.noKey')}</p>}
      {keys.value && keys.value.length > 0 && (
        <ul class="user-list" aria-label={t('account.apiKeys')}>
          {keys.value.map((k) => (
            <li key={k.id} class="user-row">
              <div class="file-meta">
                <strong>{k.name}</strong>
                <span class="muted small">
                  <code>{k.prefix}…</code> · {t('account.createdOn', { when: formatDate(k.created) })}
                </span>
              </div>
              <ConfirmButton
                label={t('account.revoke')}
                what={t('account.keyWhat', { name: k.name })}
                onConfirm={() => data(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: k.id } } })).then(keys.reload, submit.setError)}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function PasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="password-title">
      <h2 id="password-title">{t('account.password')}</h2>
      <form
        class="stack"
        onSubmit={submit.handler(async () => {
          setDone(false);
          if (next.length < 8) throw new Error(t('account.pwShort'));
          if (next !== again) throw new Error(t('account.pwDiffer'));
          await data(api.POST('/api/v1/me/password', { body: { currentPassword: current, newPassword: next } }));
          setDone(true);
          setCurrent('');
          setNext('');
          setAgain('');
        })}
      >
        <label>
          {t('account.pwCurrent')}
          <input type="password" autoComplete="current-password" value={current} required onInput={(e) => setCurrent(e.currentTarget.value)} />
        </label>
        <label>
          {t('account.pwNew')}
          <input type="password" autoComplete="new-password" minLength={8} value={next} required onInput={(e) => setNext(e.currentTarget.value)} />
        </label>
        <label>
          {t('account.pwAgain')}
          <input type="password" autoComplete="new-password" minLength={8} value={again} required onInput={(e) => setAgain(e.currentTarget.value)} />
        </label>
        <ErrorNote error={submit.error} />
        {done && (
          <p class="ok-note" role="status">
            {t('account.pwChanged')}
          </p>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            {t('account.pwChange')}
          </button>
        </div>
      </form>
    </section>
  );
}
