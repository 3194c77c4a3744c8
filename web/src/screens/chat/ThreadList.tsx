/** The chat sidebar: workspace switcher, New chat, and the workspace's threads (newest first, grouped by day). */
import { useState } from 'preact/hooks';
import type { ChatThread, Workspace } from '../../api/client';
import { Icon } from '../../components/Icon';
import { Link } from '../../components/Link';
import { navigate } from '../../router';
import { SearchBox, SearchResults, type SearchHit } from './SearchChats';
import { groupByDay } from './thread-groups';

interface Props {
  workspaces: Workspace[];
  workspace: Workspace;
  threads: ChatThread[] | null;
  currentId: string | null;
  canEdit: boolean;
  /** Whether the caller may rename or delete this thread (they started it, or they are an owner/admin). */
  canChange: (t: ChatThread) => boolean;
  onRename: (t: ChatThread, title: string) => Promise<void>;
  onDelete: (t: ChatThread) => Promise<void>;
  /** Pin or unpin: a pinned chat is kept whatever the team's retention says. */
  onPin: (t: ChatThread, pinned: boolean) => Promise<void>;
  onNavigate: () => void;
  /** "Search chats": its text, and what choosing a result does; the results replace the list while there is text */
  search: { query: string; onQuery: (q: string) => void; onPick: (hit: SearchHit) => void; inputRef: preact.RefObject<HTMLInputElement | null> };
}

const groupId = (name: string) => `threads-${name.toLowerCase().replace(/\s+/g, '-')}`;

export function ThreadList({ workspaces, workspace, threads, currentId, canEdit, canChange, onRename, onDelete, onPin, onNavigate, search }: Props) {
  const [editing, setEditing] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  return (
    <div class="threads">
      <label class="workspace-switch">
        Workspace
        <select value={workspace.id} onChange={(e) => navigate(`/w/${e.currentTarget.value}`)}>
          {workspaces.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
      <div class="thread-actions">
        <Link href={`/w/${workspace.id}`} class="button primary" onNavigate={onNavigate}>
          New chat
        </Link>
        {canEdit && (
          <Link href={`/workspaces/${workspace.id}/edit`} class="button ghost" aria-label={`Edit workspace ${workspace.name}`}>
            Edit
          </Link>
        )}
      </div>
      <SearchBox ref={search.inputRef} query={search.query} onQuery={search.onQuery} />
      {search.query.trim() ? (
        <SearchResults query={search.query.trim()} onPick={search.onPick} />
      ) : (
        <nav aria-label="Chats">
          {threads === null && <p class="muted">Loading…</p>}
          {threads?.length === 0 && <p class="muted small">No chat yet.</p>}
          {groupByDay(threads ?? [], (t) => t.updated).map((g) => (
            <div key={g.name} class="thread-group">
              <h2 id={groupId(g.name)}>{g.name}</h2>
              <ul aria-labelledby={groupId(g.name)}>
                {g.items.map((t) => (
                  <li key={t.id} class={t.id === currentId ? 'current' : ''}>
                    {editing === t.id ? (
                      <form
                        class="rename"
                        onSubmit={(e) => {
                          e.preventDefault();
                          void onRename(t, title.trim()).then(() => setEditing(null));
                        }}
                      >
                        <input aria-label="Chat title" value={title} maxLength={200} required onInput={(e) => setTitle(e.currentTarget.value)} autoFocus />
                        <button type="submit" class="small">
                          Save
                        </button>
                        <button type="button" class="small ghost" onClick={() => setEditing(null)}>
                          Cancel
                        </button>
                      </form>
                    ) : (
                      <>
                        <Link
                          href={`/w/${workspace.id}/t/${t.id}`}
                          aria-current={t.id === currentId ? 'page' : undefined}
                          onNavigate={onNavigate}
                          title={t.title}
                        >
                          {t.pinned && (
                            <span class="pinned-mark" title="Pinned: kept whatever the retention">
                              <Icon name="pin" />
                              <span class="visually-hidden">Pinned: </span>
                            </span>
                          )}
                          {t.title || 'Untitled chat'}
                        </Link>
                        {canChange(t) && (
                          <span class="thread-buttons">
                            <button
                              type="button"
                              class="icon-button ghost"
                              aria-label={`Pin ${t.title}`}
                              aria-pressed={t.pinned}
                              title={t.pinned ? 'Unpin: the retention may delete it again' : 'Pin: keep it whatever the retention'}
                              onClick={() => void onPin(t, !t.pinned)}
                            >
                              <Icon name="pin" />
                            </button>
                            <button
                              type="button"
                              class="icon-button ghost"
                              aria-label={`Rename ${t.title}`}
                              onClick={() => {
                                setTitle(t.title);
                                setEditing(t.id);
                              }}
                            >
                              <Icon name="edit" />
                            </button>
                            <button
                              type="button"
                              class="icon-button ghost danger"
                              aria-label={`Delete ${t.title}`}
                              onClick={() => {
                                if (window.confirm(`Delete the chat "${t.title}"? This cannot be undone.`)) void onDelete(t);
                              }}
                            >
                              <Icon name="trash" />
                            </button>
                          </span>
                        )}
                      </>
                    )}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
      )}
    </div>
  );
}
