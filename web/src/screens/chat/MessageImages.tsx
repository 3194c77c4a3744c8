/**
 * A message's images: thumbnails that open the image full size (a new tab on the image's own URL);
 * an answer's (generated) images also offer a download.
 */
import { imageUrl, type StoredImageRef } from './images';
import { t } from '../../i18n';

interface Props {
  images: StoredImageRef[];
  /** local previews of a message just sent (blob: URLs), before its stored images are known */
  previews?: string[] | undefined;
  generated: boolean;
}

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif' };

export function MessageImages({ images, previews, generated }: Props) {
  if (images.length === 0 && !previews?.length) return null;
  return (
    <ul class={`message-images${generated ? ' generated' : ''}`} aria-label={generated ? t('images.generated') : t('images.attached')}>
      {images.map((img, i) => (
        <li key={img.id}>
          <a href={imageUrl(img.id)} target="_blank" rel="noopener" title={t('images.fullSize')}>
            <img
              src={imageUrl(img.id)}
              alt={
                generated
                  ? t('images.generatedAlt', { n: i + 1, size: `${img.width} × ${img.height}` })
                  : t('images.alt', { n: i + 1, size: `${img.width} × ${img.height}` })
              }
              loading="lazy"
            />
          </a>
          {generated && (
            <a class="button small ghost" href={imageUrl(img.id)} download={`image-${i + 1}.${EXT[img.mimeType] ?? 'img'}`}>
              {t('docs.download')}
            </a>
          )}
        </li>
      ))}
      {previews?.map((url, i) => (
        <li key={url}>
          <img src={url} alt={t('images.n', { n: images.length + i + 1 })} />
        </li>
      ))}
    </ul>
  );
}
