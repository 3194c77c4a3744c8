/**
 * "Export" on an open thread: a button opening two download links, Markdown and JSON, to
 * GET …/history/{threadId}/export (the session cookie authenticates them; the server names the
 * file). Escape, a click elsewhere or picking a format closes it.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../../components/Icon';
import { t } from '../../i18n';

const FORMATS = [
  { format: 'md', label: 'Markdown' },
  { format: 'json', label: 'JSON' },
] as const;

export function ExportMenu({ workspaceId, threadId }: { workspaceId: string; threadId: string }) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  // attached as the menu opens (a layout effect: before the next event, not after a frame)
  useLayoutEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [open]);
  useEffect(() => setOpen(false), [threadId]);

  const base = `/api/v1/chat/${encodeURIComponent(workspaceId)}/history/${encodeURIComponent(threadId)}/export`;
  return (
    <div
      class="thread-export"
      ref={root}
      onKeyDown={(e) => {
        if (e.key !== 'Escape' || !open) return;
        // the menu's Escape, not the screen's (which would also close the phone's drawer)
        e.stopPropagation();
        setOpen(false);
        button.current?.focus();
      }}
    >
      <button type="button" class="ghost" ref={button} aria-expanded={open} aria-controls="thread-export-menu" onClick={() => setOpen(!open)}>
        <Icon name="down" />
        {t('export.button')}
      </button>
      {open && (
        <ul id="thread-export-menu" class="export-menu" aria-label={t('export.as')}>
          {FORMATS.map((f) => (
            <li key={f.format}>
              <a href={`${base}?format=${f.format}`} download onClick={() => setOpen(false)}>
                {f.label}
                <span class="muted small">.{f.format}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
