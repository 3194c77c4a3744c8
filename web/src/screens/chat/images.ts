/**
 * Images in the chat: what the chosen model can do with them (vision, image output), the images
 * attached to the next message (picked or pasted; read as base64 for the turn's `images`), and
 * the URL of a stored image. The server checks every image again by its bytes.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { t } from '../../i18n';

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
const MAX_IMAGES = 8;
const MAX_BYTES = 10 * 1_048_576;

export interface PendingImage {
  key: string;
  name: string;
  mimeType: string;
  /** base64 of the bytes */
  data: string;
  /** a blob: URL for the thumbnail */
  preview: string;
}

export interface StoredImageRef {
  id: string;
  mimeType: string;
  width: number;
  height: number;
}

export const imageUrl = (id: string) => `/api/v1/chat/images/${encodeURIComponent(id)}`;

let keys = 0;

function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
    r.onerror = () => reject(r.error ?? new Error('unreadable'));
    r.readAsDataURL(file);
  });
}

/** The team's models' image abilities, by id (null until known). */
function useModelAbilities(): Map<string, { hasVision: boolean; imageGen: boolean }> | null {
  const [abilities, setAbilities] = useState<Map<string, { hasVision: boolean; imageGen: boolean }> | null>(null);
  useEffect(() => {
    data(api.GET('/api/v1/models')).then(
      (all) => setAbilities(new Map(all.map((m) => [m.id, { hasVision: m.hasVision, imageGen: m.imageGen }]))),
      () => setAbilities(new Map()),
    );
  }, []);
  return abilities;
}

/** The composer's images for the model `modelId`: attach, paste, remove; `note` says why none can be attached. */
export function useComposerImages(modelId: string, modelName: string | null) {
  const abilities = useModelAbilities();
  const [pending, setPending] = useState<PendingImage[]>([]);
  const [refusal, setRefusal] = useState<string | null>(null);
  const vision = abilities?.get(modelId)?.hasVision === true;
  const note = abilities === null || vision ? null : t('images.noVision', { name: modelName ?? t('images.thisModel') });
  // Images attached for a model with vision do not go to one without.
  useEffect(() => {
    if (!vision) setPending((p) => (p.length ? [] : p));
  }, [vision]);
  return useMemo(
    () => ({
      vision,
      imageGen: abilities?.get(modelId)?.imageGen === true,
      note,
      refusal,
      pending,
      async add(files: File[]) {
        setRefusal(null);
        const images = files.filter((f) => IMAGE_TYPES.includes(f.type));
        if (images.length < files.length) setRefusal(t('images.kinds'));
        const fit = images.filter((f) => f.size <= MAX_BYTES);
        if (fit.length < images.length) setRefusal(t('images.size'));
        const read = await Promise.all(
          fit.map(async (f) => ({
            key: `img-${++keys}`,
            name: f.name || 'pasted image',
            mimeType: f.type,
            data: await base64Of(f),
            preview: URL.createObjectURL(f),
          })),
        );
        setPending((p) => {
          const all = [...p, ...read];
          if (all.length > MAX_IMAGES) setRefusal(t('images.max', { count: MAX_IMAGES }));
          return all.slice(0, MAX_IMAGES);
        });
      },
      /** Says why this model takes no images (the composer's image button and a pasted image). */
      explain() {
        setRefusal(note);
      },
      remove(key: string) {
        setPending((p) => p.filter((i) => i.key !== key));
      },
      /** The images for the turn's body, and the composer emptied of them. */
      take(): Array<{ mimeType: string; data: string }> {
        const out = pending.map((i) => ({ mimeType: i.mimeType, data: i.data }));
        setPending([]);
        setRefusal(null);
        return out;
      },
    }),
    [vision, abilities, modelId, note, refusal, pending],
  );
}

export type ComposerImages = ReturnType<typeof useComposerImages>;
