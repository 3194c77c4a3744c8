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
import { formatDate } from '../../components/format';
import { NotAllowed } from '../../components/NotAllowed';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { SharingSetting } from './SharingSetting';
import { useSubmit } from '../../components/useSubmit';
import { useSession } from '../../session';
import { RetentionForm } from './RetentionForm';
import { ScimTokenCard } from './ScimTokenCard';

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
      <NotAllowed title="Team" back={{ href: '/account', label: 'Go to my account' }}>
        Only the team's owners and admins manage its users. Your own API keys and password are under Account.
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
      <h1>Team: {me.team.name}</h1>
      <ErrorNote error={users.error ?? error} />
      <section aria-labelledby="users-title" class="stack">
        <h2 id="users-title">Users</h2>
        {users.loading && !users.value && <p aria-busy="true">Loading…</p>}
        {users.value && (
          <ul class="user-list" aria-label="Users">
            {users.value.map((u) => {
              const self = u.id === me.user.id;
              const changeable = !self && (isOwner || u.role !== 'owner');
              return (
                <li key={u.id} class="card user-row">
                  <div class="file-meta">
                    <strong>
                      {u.name} {self && <span class="badge">you</span>} {u.instanceAdmin && <span class="badge">instance admin</span>}
                    </strong>
                    <span class="muted small">
                      {u.email} · since {formatDate(u.created)}
                    </span>
                  </div>
                  <div class="actions">
                    {changeable ? (
                      <label class="inline">
                        <span class="visually-hidden">Role of {u.name}</span>
                        <select
                          value={u.role}
                          aria-label={`Role of ${u.name}`}
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
                      <span class="badge">{u.role}</span>
                    )}
                    {changeable && (
                      <ConfirmButton
                        label="Remove"
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
      <h2 id="invite-title">Invite a user</h2>
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
            Name
            <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Email
            <input type="email" value={email} required maxLength={320} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            Role
            <select aria-label="Role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              <RoleOptions roles={roles} />
            </select>
          </label>
        </div>
        <ErrorNote error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            Invite
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
    <div class="shown-once" role="status" aria-label={`Invitation for ${created.user.name}`}>
      <p>
        <strong>{created.user.name}</strong> was added.{' '}
        {created.inviteUrl
          ? 'Send them this link: with it they choose their password and sign in (it works once, for 7 days). It is shown only now.'
          : 'They sign in with the password you chose. Their API key is shown only now.'}
      </p>
      {created.inviteUrl && <SecretLine label="Invite link" value={created.inviteUrl} what="invite link" />}
      {created.apiKey && <SecretLine label="API key (for programs)" value={created.apiKey} what="API key" />}
    </div>
  );
}

function CreateTeamForm() {
  const [f, setF] = useState({ name: '', ownerName: '', ownerEmail: '' });
  const [created, setCreated] = useState<{ team: { name: string }; owner: User; apiKey: string; inviteUrl?: string } | null>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="teams-title">
      <h2 id="teams-title">Create a team</h2>
      <p class="muted small">As the instance admin you create teams; each gets its owner.</p>
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
            Team name
            <input value={f.name} required maxLength={200} onInput={(e) => setF({ ...f, name: e.currentTarget.value })} />
          </label>
          <label>
            Owner's name
            <input value={f.ownerName} required maxLength={200} onInput={(e) => setF({ ...f, ownerName: e.currentTarget.value })} />
          </label>
          <label>
            Owner's email
            <input type="email" value={f.ownerEmail} required maxLength={320} onInput={(e) => setF({ ...f, ownerEmail: e.currentTarget.value })} />
          </label>
        </div>
        <ErrorNote error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            Create team
          </button>
        </div>
      </form>
      {created && (
        <div class="shown-once" role="status" aria-label={`Team ${created.team.name} created`}>
          <p>
            Team <strong>{created.team.name}</strong> created with its owner {created.owner.name}. Shown only once:
          </p>
          {created.inviteUrl && <SecretLine label="Invite link" value={created.inviteUrl} what="owner's invite link" />}
          <SecretLine label="Owner's API key" value={created.apiKey} what="owner's API key" />
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
          {r}
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
