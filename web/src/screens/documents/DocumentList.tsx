/** Documents: the Plus entries the caller sees (their own and the team's public ones). */
import '../../components/admin.css';
import { api, data } from '../../api/client';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';

export function DocumentList() {
  const list = useLoad(() => data(api.GET('/api/v1/plus', { params: { query: { showPublic: true } } })), []);
  return (
    <section class="page">
      <div class="page-head">
        <h1>Documents</h1>
        <Link href="/documents/new" class="button primary">
          New document set
        </Link>
      </div>
      <p class="muted">Document sets hold files whose text grounds the answers in chats that use them.</p>
      <ErrorNote error={list.error} />
      {list.loading && !list.value && <p aria-busy="true">Loading…</p>}
      {list.value?.length === 0 && <p class="muted">No document set yet. Create one and upload files to it.</p>}
      {list.value && list.value.length > 0 && (
        <ul class="cards" aria-label="Document sets">
          {list.value.map((p) => (
            <li key={p.id} class="card">
              <Link href={`/documents/${p.id}`} class="workspace-link">
                <strong>{p.title || 'Untitled'}</strong>
                <span class="muted">{p.description || 'No description'}</span>
              </Link>
              <span class="badge">{p.isPublic ? 'Public to the team' : 'Private'}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
