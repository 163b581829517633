import { memo, useCallback, useEffect, useState } from "react";
import type { ImageUpload } from "../bindings/app/ImageUpload";
import { useT, type MessageKey } from "../i18n";
import * as ipc from "../ipc";

// Image attachments (seed §13 limits, checked again by the backend): pasted or dropped into
// the prompt, shown as removable thumbnails, sent with the turn, and shown on the user's
// message in the transcript. Every <img> gets a `data:image/...` URL this code built from
// bytes it read (the file, or the stored copy the backend returns), never page markup.

/** Most images on one message. */
export const MAX_IMAGES = 4;
/** Largest image, and largest total of one message, in bytes (10 MB). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Image types the model can see (no SVG: it can carry scripts). */
const TYPES: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
};

/** An image waiting in the prompt. */
export type PendingImage = ImageUpload & { id: string; size: number };

/** Whether `url` is a base64 `data:` URL of an allowed image type. */
function isImageDataUrl(url: string): boolean {
  const m = /^data:([a-z/+.-]+);base64,[A-Za-z0-9+/=]*$/.exec(url);
  return m !== null && m[1] !== undefined && m[1] in TYPES;
}

function readDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const raw = typeof reader.result === "string" ? reader.result : "";
      const comma = raw.indexOf(",");
      // Rebuilt from the payload with the checked type: nothing of the file's own header stays.
      const url = `data:${file.type};base64,${comma >= 0 ? raw.slice(comma + 1) : ""}`;
      if (isImageDataUrl(url)) resolve(url);
      else reject(new Error("unreadable"));
    };
    reader.onerror = () => reject(reader.error ?? new Error("unreadable"));
    reader.readAsDataURL(file);
  });
}

let nextId = 0;

/** The prompt's pending images: add (checking count, type and size), remove, take. */
export function useImageDrafts() {
  const t = useT();
  const [images, setImages] = useState<PendingImage[]>([]);
  const [error, setError] = useState<string | null>(null);

  const add = useCallback(
    async (files: File[]) => {
      const problems: string[] = [];
      const accepted: PendingImage[] = [];
      let count = images.length;
      let total = images.reduce((n, i) => n + i.size, 0);
      for (const file of files) {
        const ext = TYPES[file.type];
        const name = file.name || `image-${count + 1}.${ext ?? "png"}`;
        if (ext === undefined) {
          problems.push(`${name}: ${t("attach.wrongType")}`);
          continue;
        }
        if (count >= MAX_IMAGES) {
          problems.push(`${name}: ${t("attach.tooMany")}`);
          continue;
        }
        if (file.size > MAX_IMAGE_BYTES || total + file.size > MAX_IMAGE_BYTES) {
          problems.push(`${name}: ${t("attach.tooBig")}`);
          continue;
        }
        try {
          const dataUrl = await readDataUrl(file);
          accepted.push({ id: `img-${++nextId}`, name, mimeType: file.type, dataUrl, size: file.size });
          count++;
          total += file.size;
        } catch {
          problems.push(`${name}: ${t("attach.unreadable")}`);
        }
      }
      if (accepted.length > 0) setImages((cur) => [...cur, ...accepted]);
      setError(problems.length > 0 ? problems.join(" · ") : null);
    },
    [images, t],
  );

  const remove = useCallback((id: string) => {
    setImages((cur) => cur.filter((i) => i.id !== id));
    setError(null);
  }, []);

  /** Empties the tray, returning what it held. */
  const take = useCallback((): PendingImage[] => {
    const held = images;
    setImages([]);
    setError(null);
    return held;
  }, [images]);

  return { images, error, add, remove, take, set: setImages };
}

/** The images of a paste or drop (other data is left to the default handling). */
export function imageFiles(data: DataTransfer | null): File[] {
  if (data === null) return [];
  return Array.from(data.files ?? []).filter((f) => f.type.startsWith("image/") || f.type === "");
}

/** Thumbnails of the prompt's pending images, each removable, and the last refusal. */
export function AttachmentTray({ images, error, onRemove }: { images: PendingImage[]; error: string | null; onRemove: (id: string) => void }) {
  const t = useT();
  if (images.length === 0 && error === null) return null;
  return (
    <div className="attach-tray">
      {images.length > 0 && (
        <ul className="attach-list" aria-label={t("attach.pending")}>
          {images.map((img) => (
            <li key={img.id} className="attach-item" data-testid="pending-image" data-tip={img.name}>
              <img className="attach-thumb" src={img.dataUrl} alt={img.name} />
              <button
                type="button"
                className="chip-remove attach-remove"
                aria-label={`${t("attach.remove")} ${img.name}`}
                data-tip={t("attach.remove")}
                data-testid="pending-image-remove"
                onClick={() => onRemove(img.id)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {error !== null && (
        <p className="attach-error" role="alert" data-testid="attach-error">
          {error}
        </p>
      )}
    </div>
  );
}

/** A stored image of the session, as the transcript shows it. */
export type StoredImage = { path: string; name: string; mimeType: string };

// Stored images never change: read each one back once per page.
const readBack = new Map<string, Promise<string>>();

/** A thumbnail of a stored image, read back from the session's attachments. */
const StoredThumb = memo(function StoredThumb({ image }: { image: StoredImage }) {
  const t = useT();
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let p = readBack.get(image.path);
    if (p === undefined) {
      p = ipc.readAttachment(image.path);
      readBack.set(image.path, p);
      p.catch(() => readBack.delete(image.path));
    }
    p.then(
      (u) => {
        if (!live) return;
        if (isImageDataUrl(u)) setUrl(u);
        else setFailed(t("attach.unreadable"));
      },
      (e: unknown) => {
        if (live) setFailed(ipc.describeError(e));
      },
    );
    return () => {
      live = false;
    };
  }, [image.path, t]);
  if (url === null) {
    return (
      <span className="msg-image msg-image-missing" data-testid="message-image-missing" data-tip={failed ?? image.name}>
        {image.name}
      </span>
    );
  }
  return <img className="msg-image" src={url} alt={image.name} data-tip={image.name} data-testid="message-image" />;
});

/** Thumbnails and file chips of what a user message carried. */
export function MessageAttachments({ images, files }: { images: StoredImage[]; files: string[] }) {
  const t = useT();
  if (images.length === 0 && files.length === 0) return null;
  const fileKey: MessageKey = "attach.fileChip";
  return (
    <div className="msg-attachments">
      {images.map((img) => (
        <StoredThumb key={img.path} image={img} />
      ))}
      {files.map((path) => (
        <span key={path} className="file-chip" data-testid="message-file" data-path={path} data-tip={t(fileKey)}>
          @{path}
        </span>
      ))}
    </div>
  );
}
