/**
 * The team's SCIM token (owner): what an identity provider uses at /scim/v2 to create, update and
 * deactivate the team's people. Shown once when made; making another replaces it.
 */
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { CopyButton } from '../../components/CopyButton';
import { ErrorNote } from '../../components/Problem';
import { useSubmit } from '../../components/useSubmit';

export function ScimTokenCard() {
  const [token, setToken] = useState<string | null>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="scim-title">
      <h2 id="scim-title">Provisioning (SCIM)</h2>
      <p class="muted small">
        Your identity provider can add, change and deactivate this team's people at <code>{`${window.location.origin}/scim/v2`}</code> with a token. A new token
        replaces the previous one at once.
      </p>
      <form class="actions" onSubmit={submit.handler(() => data(api.POST('/api/v1/scim/token')).then((r) => setToken(r.token)))}>
        <button type="submit" disabled={submit.busy}>
          Create SCIM token
        </button>
      </form>
      <ErrorNote error={submit.error} />
      {token && (
        <div class="shown-once" role="status" aria-label="SCIM token">
          <p>Copy it into your identity provider now: it is shown only once.</p>
          <p class="secret-line">
            <span>SCIM token</span> <code>{token}</code> <CopyButton text={token} what="SCIM token" />
          </p>
        </div>
      )}
    </section>
  );
}
