/** The chat sidebar: workspace switcher, New chat, and the workspace's threads (newest first, grouped by day). */
import { useState } from 'preact/hooks';
import type { ChatThread, Workspace } from '../../api/client';
import { Icon } from '../../components/Icon';
import { Link } from '../../components/Link';
import { navigate } from '../../router';
import { SearchBox, SearchResults, type SearchHit } from './SearchChats';
import { groupByDay, type GroupName } from './thread-groups';
import { t } from '../../i18n';

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

/** The day groups (thread-groups.ts) as the list heads them. */
const GROUP_LABELS: Record<GroupName, () => string> = {
  Today: () => t('threads.today'),
  Yesterday: () => t('threads.yesterday'),
  'Last 7 days': () => t('threads.last7'),
  'Last 30 days': () => t('threads.last30'),
  Older: () => t('threads.older'),
};

export function ThreadList({ workspaces, workspace, threads, currentId, canEdit, canChange, onRename, onDelete, onPin, onNavigate, search }: Props) {
  const [editing, setEditing] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  return (
    <div class="threads">
      <label class="workspace-switch">
        {t('threads.workspace')}
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
          {t('chat.newChat')}
        </Link>
        {canEdit && (
          <Link href={`/workspaces/${workspace.id}/edit`} class="button ghost" aria-label={t('threads.editWorkspace', { name: workspace.name })}>
            {t('common.edit')}
          </Link>
        )}
      </div>
      <SearchBox ref={search.inputRef} query={search.query} onQuery={search.onQuery} />
      {search.query.trim() ? (
        <SearchResults query={search.query.trim()} onPick={search.onPick} />
      ) : (
        <nav aria-label={t('chat.chats')}>
          {threads === null && <p class="muted">{t('common.loading')}</p>}
          {threads?.length === 0 && <p class="muted small">{t('threads.none')}</p>}
          {groupByDay(threads ?? [], (th) => th.updated).map((g) => (
            <div key={g.name} class="thread-group">
              <h2 id={groupId(g.name)}>{GROUP_LABELS[g.name]()}</h2>
              <ul aria-labelledby={groupId(g.name)}>
                {g.items.map((th) => (
                  <li key={th.id} class={th.id === currentId ? 'current' : ''}>
                    {editing === th.id ? (
                      <form
                        class="rename"
                        onSubmit={(e) => {
                          e.preventDefault();
                          void onRename(th, title.trim()).then(() => setEditing(null));
                        }}
                      >
                        <input
                          aria-label={t('threads.title')}
                          value={title}
                          maxLength={200}
                          required
                          onInput={(e) => setTitle(e.currentTarget.value)}
                          autoFocus
                        />
                        <button type="submit" class="small">
                          {t('common.save')}
                        </button>
                        <button type="button" class="small ghost" onClick={() => setEditing(null)}>
                          {t('common.cancel')}
                        </button>
                      </form>
                    ) : (
                      <>
                        <Link
                          href={`/w/${workspace.id}/t/${th.id}`}
                          aria-current={th.id === currentId ? 'page' : undefined}
                          onNavigate={onNavigate}
                          title={th.title}
                        >
                          {th.pinned && (
                            <span class="pinned-mark" title={t('threads.pinned')}>
                              <Icon name="pin" />
                              <span class="visually-hidden">{t('threads.pinnedMark')} </span>
                            </span>
                          )}
                          {th.title || t('threads.untitled')}
                        </Link>
                        {canChange(th) && (
                          <span class="thread-buttons">
                            <button
                              type="button"
                              class="icon-button ghost"
                              aria-label={t('threads.pin', { title: th.title })}
                              aria-pressed={th.pinned}
                              title={th.pinned ? t('threads.unpinTitle') : t('threads.pinTitle')}
                              onClick={() => void onPin(th, !th.pinned)}
                            >
                              <Icon name="pin" />
                            </button>
                            <button
                              type="button"
                              class="icon-button ghost"
                              aria-label={t('threads.rename', { title: th.title })}
                              onClick={() => {
                                setTitle(th.title);
                                setEditing(th.id);
                              }}
                            >
                              <Icon name="edit" />
                            </button>
                            <button
                              type="button"
                              class="icon-button ghost danger"
                              aria-label={t('threads.delete', { title: th.title })}
                              onClick={() => {
                                if (window.confirm(t('threads.deleteConfirm', { title: th.title }))) void onDelete(th);
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
