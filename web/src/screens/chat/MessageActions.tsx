/**
 * What can be done to a stored message in place: page through its versions ("Previous version",
 * "Next version", "2 / 3") and, on a question, edit it (an inline editor; saving asks the new
 * version, the old one is kept).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../../components/Icon';
import type { ChatItem } from './types';
import { t } from '../../i18n';

export interface MessageActionHandlers {
  /** Ask `text` as a new version of the question `item`. */
  onEdit(item: ChatItem, text: string): void;
  /** Show the version `step` (−1, +1) away from `item`. */
  onVersion(item: ChatItem, step: -1 | 1): void;
}

export function VersionPager({ item, actions }: { item: ChatItem; actions: MessageActionHandlers | undefined }) {
  const v = item.versions;
  if (!v || v.count < 2) return null;
  return (
    <span class="versions" role="group" aria-label={item.role === 'user' ? t('versions.ofQuestion') : t('versions.ofAnswer')}>
      <button
        type="button"
        class="icon-button"
        aria-label={t('versions.previous')}
        disabled={!actions || v.index <= 1}
        onClick={() => actions?.onVersion(item, -1)}
      >
        ‹
      </button>
      <span class="small muted">
        {v.index} / {v.count}
      </span>
      <button
        type="button"
        class="icon-button"
        aria-label={t('versions.next')}
        disabled={!actions || v.index >= v.count}
        onClick={() => actions?.onVersion(item, 1)}
      >
        ›
      </button>
    </span>
  );
}

/** The question's text, or its editor once "Edit" is pressed. */
export function EditableQuestion({ item, actions }: { item: ChatItem; actions: MessageActionHandlers | undefined }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(item.content);
  const area = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (editing) area.current?.focus();
  }, [editing]);
  const close = () => {
    setEditing(false);
    setText(item.content);
    requestAnimationFrame(() => editButton.current?.focus());
  };
  const save = () => {
    if (!text.trim() || !actions) return;
    setEditing(false);
    actions.onEdit(item, text);
  };
  if (!editing)
    return (
      <>
        <div class="user-text">{item.content}</div>
        <div class="message-actions">
          <VersionPager item={item} actions={actions} />
          {actions && item.id && (
            <button type="button" class="icon-button" aria-label={t('common.edit')} ref={editButton} onClick={() => setEditing(true)}>
              <Icon name="edit" />
            </button>
          )}
        </div>
      </>
    );
  return (
    <form
      class="edit-question"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <label class="visually-hidden" for={`edit-${item.key}`}>
        {t('versions.editQuestion')}
      </label>
      <textarea
        id={`edit-${item.key}`}
        ref={area}
        value={text}
        rows={Math.min(10, Math.max(2, text.split('\n').length))}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            close();
          } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            save();
          }
        }}
      />
      <div class="edit-buttons">
        <button type="button" class="ghost small" onClick={close}>
          {t('common.cancel')}
        </button>
        <button type="submit" class="small" disabled={!text.trim() || text === item.content}>
          {t('versions.saveAndAsk')}
        </button>
      </div>
    </form>
  );
}
