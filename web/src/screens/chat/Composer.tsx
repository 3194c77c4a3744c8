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
        <ul class="uploads" aria-label="Attached files">
          {p.uploads.map((u) => (
            <li key={u.id} class={u.state}>
              <span class="name">{u.name}</span>
              {u.state === 'uploading' && <progress max={1} value={u.progress} aria-label={`Uploading ${u.name}`} />}
              {u.state === 'done' && <span class="ok">attached</span>}
              {u.state === 'failed' && (
                <span class="failed" role="alert">
                  {u.message}
                </span>
              )}
              {u.state !== 'uploading' && (
                <button type="button" class="icon-button ghost" aria-label={`Dismiss ${u.name}`} onClick={() => p.onDismissUpload(u.id)}>
                  <Icon name="close" />
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {img.pending.length > 0 && (
        <ul class="pending-images" aria-label="Images to send">
          {img.pending.map((i) => (
            <li key={i.key}>
              <img src={i.preview} alt={i.name} />
              <button type="button" class="icon-button ghost" aria-label={`Remove ${i.name}`} onClick={() => img.remove(i.key)}>
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
          aria-label="Message"
          placeholder={
            sendOnEnter
              ? 'Ask something… (Enter sends, Shift+Enter for a new line, / for saved prompts)'
              : 'Ask something… (Ctrl+Enter sends, Enter for a new line, / for saved prompts)'
          }
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
          <button type="button" class="icon-button ghost" aria-label="Attach files" title="Attach files" onClick={() => fileInput.current?.click()}>
            <Icon name="clip" />
          </button>
          <input
            ref={fileInput}
            type="file"
            multiple
            class="visually-hidden"
            tabIndex={-1}
            aria-label="Files to attach"
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
            aria-label="Attach images"
            title={img.note ?? 'Attach images (or paste them)'}
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
            aria-label="Images to attach"
            accept={IMAGE_TYPES.join(',')}
            onChange={(e) => {
              const files = Array.from(e.currentTarget.files ?? []);
              e.currentTarget.value = '';
              if (files.length) void img.add(files);
            }}
          />
          {p.models.length > 1 && (
            <select aria-label="Model" value={p.modelId} onChange={(e) => p.onModel(e.currentTarget.value)}>
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
              Docs<span class="visually-hidden"> for this chat</span>
              {p.selectedPlus.length > 0 ? ` (${p.selectedPlus.length})` : ''}
            </summary>
            <div class="plus-menu">
              {p.plus === null && <p class="muted small">Loading…</p>}
              {p.plus?.length === 0 && <p class="muted small">No document collection yet.</p>}
              {p.plus?.map((e) => (
                <label key={e.id} class="check">
                  <input type="checkbox" checked={p.selectedPlus.includes(e.id)} onChange={() => p.onTogglePlus(e.id)} />
                  {e.title || 'Untitled'}
                </label>
              ))}
            </div>
          </details>
          <span class="spacer" />
          {p.streaming ? (
            <button type="button" class="danger" onClick={p.onStop}>
              Stop
            </button>
          ) : (
            <button type="submit" class="primary" disabled={!text.trim()}>
              Send
            </button>
          )}
        </div>
      </form>
    </div>
  );
}
