/**
 * Team (owners/admins): the users with their roles, invite a user (the invite link, or the first
 * API key, is shown once), change a role, remove a user; the instance admin also creates teams.
 * Only an owner may grant or take away the owner role, so admins are not offered it. The team's
 * retention (RetentionForm) and its SCIM token (ScimTokenCard) are set here too, by the owner.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CopyButton } from '../../components/CopyButton';
import { formatDate, roleName } from '../../components/format';
import { NotAllowed } from '../../components/NotAllowed';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { SharingSetting } from './SharingSetting';
import { useSubmit } from '../../components/useSubmit';
import { useSession } from '../../session';
import { RetentionForm } from './RetentionForm';
import { ScimTokenCard } from './ScimTokenCard';
import { t } from '../../i18n';

type User = Schemas['User'];
type Role = User['role'];

/** What creating a user answers: the user, their first API key, and (with sign-in) a one-use invite link. */
interface Created {
  user: User;
  apiKey?: string;
  inviteUrl?: string;
}

export function TeamScreen() {
  const { me } = useSession();
  if (me.user.role !== 'owner' && me.user.role !== 'admin') {
    return (
      <NotAllowed title={t('nav.team')} back={{ href: '/account', label: t('audit.toAccount') }}>
        {t('team.notAllowed')}
      </NotAllowed>
    );
  }
  return <TeamAdmin />;
}

function TeamAdmin() {
  const { me } = useSession();
  const users = useLoad(() => data(api.GET('/api/v1/users')), []);
  const [error, setError] = useState<unknown>(null);
  const isOwner = me.user.role === 'owner';
  const roles: Role[] = isOwner ? ['member', 'admin', 'owner'] : ['member', 'admin'];

  return (
    <section class="page stack">
      <h1>{t('team.title', { name: me.team.name })}</h1>
      <ErrorNote error={users.error ?? error} />
      <section aria-labelledby="users-title" class="stack">
        <h2 id="users-title">{t('team.users')}</h2>
        {users.loading && !users.value && <p aria-busy="true">{t('common.loading')}</p>}
        {users.value && (
          <ul class="user-list" aria-label={t('team.users')}>
            {users.value.map((u) => {
              const self = u.id === me.user.id;
              const changeable = !self && (isOwner || u.role !== 'owner');
              return (
                <li key={u.id} class="card user-row">
                  <div class="file-meta">
                    <strong>
                      {u.name} {self && <span class="badge">{t('team.you')}</span>} {u.instanceAdmin && <span class="badge">{t('team.instanceAdmin')}</span>}
                    </strong>
                    <span class="muted small">
                      {u.email} · {t('team.since', { when: formatDate(u.created) })}
                    </span>
                  </div>
                  <div class="actions">
                    {changeable ? (
                      <label class="inline">
                        <span class="visually-hidden">{t('team.roleOf', { name: u.name })}</span>
                        <select
                          value={u.role}
                          aria-label={t('team.roleOf', { name: u.name })}
                          onChange={(e) => {
                            const role = e.currentTarget.value as Role;
                            setError(null);
                            data(api.PATCH('/api/v1/users/{userId}', { params: { path: { userId: u.id } }, body: { role } })).then(
                              users.reload,
                              (err: unknown) => {
                                setError(err);
                                users.reload();
                              },
                            );
                          }}
                        >
                          <RoleOptions roles={roles} />
                        </select>
                      </label>
                    ) : (
                      <span class="badge">{roleName(u.role)}</span>
                    )}
                    {changeable && (
                      <ConfirmButton
                        label={t('team.remove')}
                        what={u.name}
                        onConfirm={() => data(api.DELETE('/api/v1/users/{userId}', { params: { path: { userId: u.id } } })).then(users.reload, setError)}
                      />
                    )}
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </section>
      <InviteForm roles={roles} onCreated={users.reload} />
      <RetentionForm teamId={me.team.id} owner={isOwner} />
      {isOwner && <ScimTokenCard />}
      <SharingSetting />
      {me.user.instanceAdmin && <CreateTeamForm />}
    </section>
  );
}

function InviteForm({ roles, onCreated }: { roles: Role[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [created, setCreated] = useState<Created | null>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="invite-title">
      <h2 id="invite-title">{t('team.invite')}</h2>
      <form
        class="stack"
        onSubmit={submit.handler(() => {
          setCreated(null);
          return data(api.POST('/api/v1/users', { body: { name: name.trim(), email: email.trim(), role } })).then((c) => {
            setCreated(c as Created);
            setName('');
            setEmail('');
            onCreated();
          });
        })}
      >
        <div class="row">
          <label>
            {t('ws.f.name')}
            <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            {t('signin.email')}
            <input type="email" value={email} required maxLength={320} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            {t('team.role')}
            <select aria-label={t('team.role')} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              <RoleOptions roles={roles} />
            </select>
          </label>
        </div>
        <ErrorNote error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            {t('team.inviteButton')}
          </button>
        </div>
      </form>
      {created && <ShownOnce created={created} />}
    </section>
  );
}

/** The secrets of a new user, shown this once: the invite link (to set a password) and/or the API key. */
function ShownOnce({ created }: { created: Created }) {
  return (
    <div class="shown-once" role="status" aria-label={t('team.invitationFor', { name: created.user.name })}>
      <p>
        <strong>{created.user.name}</strong> {t('team.added')} {created.inviteUrl ? t('team.sendLink') : t('team.passwordChosen')}
      </p>
      {created.inviteUrl && <SecretLine label={t('team.inviteLink')} value={created.inviteUrl} what={t('team.inviteLinkLower')} />}
      {created.apiKey && <SecretLine label={t('team.apiKeyPrograms')} value={created.apiKey} what={t('model.apiKey')} />}
    </div>
  );
}

function CreateTeamForm() {
  const [f, setF] = useState({ name: '', ownerName: '', ownerEmail: '' });
  const [created, setCreated] = useState<{ team: { name: string }; owner: User; apiKey: string; inviteUrl?: string } | null>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="teams-title">
      <h2 id="teams-title">{t('team.create')}</h2>
      <p class="muted small">{t('team.createHint')}</p>
      <form
        class="stack"
        onSubmit={submit.handler(() =>
          data(api.POST('/api/v1/teams', { body: { name: f.name.trim(), ownerName: f.ownerName.trim(), ownerEmail: f.ownerEmail.trim() } })).then((c) => {
            setCreated(c);
            setF({ name: '', ownerName: '', ownerEmail: '' });
          }),
        )}
      >
        <div class="row">
          <label>
            {t('team.name')}
            <input value={f.name} required maxLength={200} onInput={(e) => setF({ ...f, name: e.currentTarget.value })} />
          </label>
          <label>
            {t('team.ownerName')}
            <input value={f.ownerName} required maxLength={200} onInput={(e) => setF({ ...f, ownerName: e.currentTarget.value })} />
          </label>
          <label>
            {t('team.ownerEmail')}
            <input type="email" value={f.ownerEmail} required maxLength={320} onInput={(e) => setF({ ...f, ownerEmail: e.currentTarget.value })} />
          </label>
        </div>
        <ErrorNote error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            {t('team.createButton')}
          </button>
        </div>
      </form>
      {created && (
        <div class="shown-once" role="status" aria-label={t('team.createdLabel', { name: created.team.name })}>
          <p>
            {t('team.created.before')} <strong>{created.team.name}</strong> {t('team.created.after', { owner: created.owner.name })}
          </p>
          {created.inviteUrl && <SecretLine label={t('team.inviteLink')} value={created.inviteUrl} what={t('team.ownerInvite')} />}
          <SecretLine label={t('team.ownerKey')} value={created.apiKey} what={t('team.ownerKeyLower')} />
        </div>
      )}
    </section>
  );
}

function RoleOptions({ roles }: { roles: Role[] }) {
  return (
    <>
      {roles.map((r) => (
        <option key={r} value={r}>
          {roleName(r)}
        </option>
      ))}
    </>
  );
}

/** One secret shown once, with its copy button. */
function SecretLine({ label, value, what }: { label: string; value: string; what: string }) {
  return (
    <p class="secret-line">
      <span>{label}</span> <code>{value}</code> <CopyButton text={value} what={what} />
    </p>
  );
}
