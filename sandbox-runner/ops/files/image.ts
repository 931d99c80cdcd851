import type sharpModule from 'sharp';

/**
 * sharp (native, ~0.8 s to load here) is loaded on the first image, not when the runner starts:
 * most runner processes never read an image, and every new one is a cold start.
 */
let sharpLoaded: Promise<typeof sharpModule> | undefined;
function loadSharp(): Promise<typeof sharpModule> {
  sharpLoaded ??= import('sharp').then((m) => m.default);
  return sharpLoaded;
}

/** What the Messages API takes comfortably: at most 2000×2000 pixels and 3.75 MB per image. */
export const IMAGE_MAX_SIDE = 2000;
export const IMAGE_MAX_BYTES = 3.75 * 1024 * 1024;
/** Base64 characters per token, as the harness estimates image cost. */
const TOKENS_PER_BASE64_CHAR = 0.125;

export interface PreparedImage {
  buffer: Buffer;
  mediaType: string;
}

/**
 * Makes an image fit for the model: shrunk (keeping its aspect ratio) to the size limits, then,
 * if its estimated token cost is still over `maxTokens`, squeezed harder — smaller scales, fewer
 * colours, lower JPEG quality — with a last resort of 400×400 at quality 20.
 */
export async function prepareImage(bytes: Buffer, format: string, maxTokens: number): Promise<PreparedImage> {
  let image: PreparedImage;
  try {
    image = await fitLimits(bytes, format);
  } catch {
    return { buffer: bytes, mediaType: mediaTypeOf(format) };
  }
  if (Math.ceil(image.buffer.toString('base64').length * TOKENS_PER_BASE64_CHAR) <= maxTokens) return image;
  const budget = Math.floor(Math.floor(maxTokens / TOKENS_PER_BASE64_CHAR) * 0.75);
  try {
    return await squeeze(bytes, format, budget);
  } catch {
    return image;
  }
}

async function fitLimits(bytes: Buffer, format: string): Promise<PreparedImage> {
  const sharp = await loadSharp();
  const meta = await sharp(bytes).metadata();
  const kind = normalise(meta.format ?? format);
  const { width, height } = meta;
  if (!width || !height) {
    return bytes.length > IMAGE_MAX_BYTES
      ? { buffer: await sharp(bytes).jpeg({ quality: 80 }).toBuffer(), mediaType: 'image/jpeg' }
      : { buffer: bytes, mediaType: mediaTypeOf(kind) };
  }
  const oversized = width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE;
  if (!oversized && bytes.length <= IMAGE_MAX_BYTES) return { buffer: bytes, mediaType: mediaTypeOf(kind) };
  const [w, h] = fitWithin(width, height);
  const resized = () => sharp(bytes).resize(w, h, { fit: 'inside', withoutEnlargement: true });
  const plain = await resized().toBuffer();
  if (plain.length <= IMAGE_MAX_BYTES) return { buffer: plain, mediaType: mediaTypeOf(kind) };
  if (kind === 'png') {
    const png = await resized().png({ compressionLevel: 9, palette: true }).toBuffer();
    if (png.length <= IMAGE_MAX_BYTES) return { buffer: png, mediaType: 'image/png' };
  }
  for (const quality of [80, 60, 40, 20]) {
    const jpeg = await resized().jpeg({ quality }).toBuffer();
    if (jpeg.length <= IMAGE_MAX_BYTES) return { buffer: jpeg, mediaType: 'image/jpeg' };
  }
  return { buffer: await resized().jpeg({ quality: 20 }).toBuffer(), mediaType: 'image/jpeg' };
}

async function squeeze(bytes: Buffer, format: string, maxBytes: number): Promise<PreparedImage> {
  const sharp = await loadSharp();
  const meta = await sharp(bytes).metadata();
  const kind = normalise(meta.format ?? format);
  // Start from the size limits, not the original: squeezing never makes an image larger than fitLimits would.
  const [baseW, baseH] = fitWithin(meta.width ?? IMAGE_MAX_SIDE, meta.height ?? IMAGE_MAX_SIDE);
  for (const scale of [1, 0.75, 0.5, 0.25]) {
    const w = Math.max(1, Math.round(baseW * scale));
    const h = Math.max(1, Math.round(baseH * scale));
    let pipeline = sharp(bytes).resize(w, h, { fit: 'inside', withoutEnlargement: true });
    if (kind === 'png') pipeline = pipeline.png({ compressionLevel: 9, palette: true });
    else if (kind === 'jpeg') pipeline = pipeline.jpeg({ quality: 80 });
    else if (kind === 'webp') pipeline = pipeline.webp({ quality: 80 });
    const out = await pipeline.toBuffer();
    if (out.length <= maxBytes) return { buffer: out, mediaType: mediaTypeOf(kind) };
  }
  const fewColours = await sharp(bytes)
    .resize(800, 800, { fit: 'inside', withoutEnlargement: true })
    .png({ compressionLevel: 9, palette: true, colors: 64 })
    .toBuffer();
  if (fewColours.length <= maxBytes) return { buffer: fewColours, mediaType: 'image/png' };
  for (const quality of [50, 20]) {
    const jpeg = await sharp(bytes).resize(600, 600, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality }).toBuffer();
    if (jpeg.length <= maxBytes) return { buffer: jpeg, mediaType: 'image/jpeg' };
  }
  return { buffer: await sharp(bytes).resize(400, 400, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 20 }).toBuffer(), mediaType: 'image/jpeg' };
}

/** The largest size within IMAGE_MAX_SIDE×IMAGE_MAX_SIDE with the same aspect ratio (never enlarged). */
function fitWithin(width: number, height: number): [number, number] {
  let [w, h] = [width, height];
  if (w > IMAGE_MAX_SIDE) [w, h] = [IMAGE_MAX_SIDE, Math.round((h * IMAGE_MAX_SIDE) / w)];
  if (h > IMAGE_MAX_SIDE) [w, h] = [Math.round((w * IMAGE_MAX_SIDE) / h), IMAGE_MAX_SIDE];
  return [w, h];
}

function normalise(format: string): string {
  return format === 'jpg' ? 'jpeg' : format;
}

function mediaTypeOf(format: string): string {
  return `image/${normalise(format)}`;
}
