/**
 * The message box and its controls: Enter sends, Shift+Enter adds a line (or, as the person's
 * settings may say, Enter adds a line and Ctrl/⌘+Enter sends), Esc (anywhere on the
 * chat screen, see ChatScreen) stops. Model picker, attachments with per-file progress, and the
 * Plus entries drawn on for this chat.
 */
import { useRef, useState } from 'preact/hooks';
import type { PlusSummary, WorkspaceModel } from '../../api/client';
import { Icon } from '../../components/Icon';
import { useSettings } from '../../settings';
import { usePromptMenu, type LibraryPrompt } from './PromptMenu';
import { IMAGE_TYPES, type ComposerImages } from './images';
import { t } from '../../i18n';

export interface Upload {
  id: string;
  name: string;
  progress: number;
  state: 'uploading' | 'done' | 'failed';
  message?: string;
}

interface Props {
  streaming: boolean;
  onSend: (text: string) => boolean;
  onStop: () => void;
  models: WorkspaceModel[];
  modelId: string;
  onModel: (id: string) => void;
  plus: PlusSummary[] | null;
  selectedPlus: string[];
  onTogglePlus: (id: string) => void;
  uploads: Upload[];
  onFiles: (files: File[]) => void;
  onDismissUpload: (id: string) => void;
  /** the `/` menu's prompts (PromptMenu.tsx) */
  prompts?: LibraryPrompt[];
  /** the images going with the next message (only for a model with vision) */
  images: ComposerImages;
}

export function Composer(p: Props) {
  const [text, setText] = useState('');
  const { sendOnEnter } = useSettings();
  const fileInput = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const menu = usePromptMenu(text, setText, p.prompts ?? [], box);
  const imageInput = useRef<HTMLInputElement>(null);
  const img = p.images;
  const send = () => {
    if (!text.trim() || p.streaming) return;
    if (p.onSend(text)) setText('');
  };
  return (
    <div class="composer">
      {p.uploads.length > 0 && (
        <ul class="uploads" aria-label={t('composer.attached')}>
          {p.uploads.map((u) => (
            <li key={u.id} class={u.state}>
              <span class="name">{u.name}</span>
              {u.state === 'uploading' && <progress max={1} value={u.progress} aria-label={t('composer.uploading', { name: u.name })} />}
              {u.state === 'done' && <span class="ok">{t('composer.attachedOne')}</span>}
              {u.state === 'failed' && (
                <span class="failed" role="alert">
                  {u.message}
                </span>
              )}
              {u.state !== 'uploading' && (
                <button type="button" class="icon-button ghost" aria-label={t('composer.dismiss', { name: u.name })} onClick={() => p.onDismissUpload(u.id)}>
                  <Icon name="close" />
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {img.pending.length > 0 && (
        <ul class="pending-images" aria-label={t('composer.imagesToSend')}>
          {img.pending.map((i) => (
            <li key={i.key}>
              <img src={i.preview} alt={i.name} />
              <button type="button" class="icon-button ghost" aria-label={t('composer.remove', { name: i.name })} onClick={() => img.remove(i.key)}>
                <Icon name="close" />
              </button>
            </li>
          ))}
        </ul>
      )}
      {img.refusal && (
        <p class="error-note small" role="alert">
          {img.refusal}
        </p>
      )}
      <form
        class="composer-box"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        {menu.view}
        <textarea
          ref={box}
          {...menu.inputProps}
          aria-label={t('composer.message')}
          placeholder={sendOnEnter ? t('composer.placeholder.enter') : t('composer.placeholder.ctrlEnter')}
          rows={2}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onPaste={(e) => {
            // A pasted image goes with the message (for a model with vision); pasted text as usual.
            const files = Array.from(e.clipboardData?.files ?? []).filter((f) => IMAGE_TYPES.includes(f.type));
            if (files.length === 0) return;
            e.preventDefault();
            if (img.vision) void img.add(files);
            else img.explain();
          }}
          onKeyDown={(e) => {
            if (menu.onKeyDown(e)) return;
            if (e.key === 'Enter' && !e.isComposing && (sendOnEnter ? !e.shiftKey : e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              send();
            }
          }}
        />
        <div class="composer-controls">
          <button
            type="button"
            class="icon-button ghost"
            aria-label={t('composer.attachFiles')}
            title={t('composer.attachFiles')}
            onClick={() => fileInput.current?.click()}
          >
            <Icon name="clip" />
          </button>
          <input
            ref={fileInput}
            type="file"
            multiple
            class="visually-hidden"
            tabIndex={-1}
            aria-label={t('composer.filesToAttach')}
            accept=".txt,.md,.markdown,.csv,.json,.html,.htm,.pdf,.docx,text/*,application/pdf,application/json"
            onChange={(e) => {
              const files = Array.from(e.currentTarget.files ?? []);
              e.currentTarget.value = '';
              if (files.length) p.onFiles(files);
            }}
          />
          <button
            type="button"
            class="icon-button ghost"
            aria-label={t('composer.attachImages')}
            title={img.note ?? t('composer.attachImagesTitle')}
            onClick={() => (img.vision ? imageInput.current?.click() : img.explain())}
          >
            <Icon name="image" />
          </button>
          <input
            ref={imageInput}
            type="file"
            multiple
            class="visually-hidden"
            tabIndex={-1}
            aria-label={t('composer.imagesToAttach')}
            accept={IMAGE_TYPES.join(',')}
            onChange={(e) => {
              const files = Array.from(e.currentTarget.files ?? []);
              e.currentTarget.value = '';
              if (files.length) void img.add(files);
            }}
          />
          {p.models.length > 1 && (
            <select aria-label={t('composer.model')} value={p.modelId} onChange={(e) => p.onModel(e.currentTarget.value)}>
              {p.models.map((m) => (
                <option key={m.modelId} value={m.modelId}>
                  {m.modelName}
                </option>
              ))}
            </select>
          )}
          <details
            class="plus-picker"
            onKeyDown={(e) => {
              // Esc closes the open picker (and nothing else: not the answer in flight)
              if (e.key === 'Escape' && e.currentTarget.open) {
                e.preventDefault();
                e.currentTarget.open = false;
                e.currentTarget.querySelector('summary')?.focus();
              }
            }}
          >
            <summary>
              {t('composer.docs')}
              <span class="visually-hidden"> {t('composer.docsForChat')}</span>
              {p.selectedPlus.length > 0 ? ` (${p.selectedPlus.length})` : ''}
            </summary>
            <div class="plus-menu">
              {p.plus === null && <p class="muted small">{t('common.loading')}</p>}
              {p.plus?.length === 0 && <p class="muted small">{t('composer.noDocs')}</p>}
              {p.plus?.map((e) => (
                <label key={e.id} class="check">
                  <input type="checkbox" checked={p.selectedPlus.includes(e.id)} onChange={() => p.onTogglePlus(e.id)} />
                  {e.title || t('common.untitled')}
                </label>
              ))}
            </div>
          </details>
          <span class="spacer" />
          {p.streaming ? (
            <button type="button" class="danger" onClick={p.onStop}>
              {t('composer.stop')}
            </button>
          ) : (
            <button type="submit" class="primary" disabled={!text.trim()}>
              {t('composer.send')}
            </button>
          )}
        </div>
      </form>
    </div>
  );
}
