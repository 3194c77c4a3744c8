/**
 * The chats drawer of the chat screen (a sidebar on a wide screen, a drawer on a phone) and the
 * screen's keys: Esc closes the open drawer, else stops the answer in flight; Ctrl/Cmd+K goes to
 * the search box (opening the drawer on a narrow screen). The opened drawer takes the focus.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

/** `stopTurn` stops the answer in flight and says whether there was one (Esc is then taken). */
export function useChatDrawer(stopTurn: () => boolean) {
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const drawer = useRef<HTMLElement>(null);
  const searchInput = useRef<HTMLInputElement>(null);
  /** Set by Ctrl/Cmd+K when it opens the drawer: the search box, not the drawer's first control, takes the focus. */
  const searchOnOpen = useRef(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented) return;
      if (e.key === 'Escape') {
        if (open) {
          e.preventDefault();
          setOpen(false);
          toggle.current?.focus();
        } else if (stopTurn()) e.preventDefault();
        return;
      }
      // Ctrl/Cmd+K: to the search box (opening the chats drawer on a narrow screen)
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        // the drawer this opens gives its focus to the search box, not to its first control
        if (!open) searchOnOpen.current = true;
        setOpen(true);
        requestAnimationFrame(() => {
          searchInput.current?.focus();
          searchInput.current?.select();
        });
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [stopTurn, open]);
  // The opened drawer takes the focus (its first control), so that the keyboard is where the eyes are.
  useEffect(() => {
    if (!open) return;
    if (searchOnOpen.current) {
      searchOnOpen.current = false;
      searchInput.current?.focus();
      return;
    }
    drawer.current?.querySelector<HTMLElement>('select, a, button')?.focus();
  }, [open]);
  return { open, setOpen, toggle, drawer, searchInput };
}
