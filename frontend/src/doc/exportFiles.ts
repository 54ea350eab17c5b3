// The files of a code export (docs/code-export.md): the script alone, or, where the graph
// stores many values no seed gives (a training's weights), the script and the .safetensors
// file it loads from beside itself, in one .zip: a browser lets a click download one file.
import { strToU8, unzipSync, zipSync } from "fflate";

/** What POST /api/export answers: the script, and its weights file as base64 where it has one. */
export interface ExportedCode {
  code: string;
  weights?: string;
}

export function base64Bytes(text: string): Uint8Array {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

export function bytesBase64(bytes: Uint8Array): string {
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(raw);
}

/** The download of an export named `base` ("lenet_torch"): `base.py`, or `base.zip` holding
 * `base.py` and `base.safetensors` (the name the script loads: its own, another suffix). */
export function exportDownload(base: string, out: ExportedCode): { name: string; type: string; data: Uint8Array } {
  const script = strToU8(out.code);
  if (!out.weights) return { name: `${base}.py`, type: "text/x-python", data: script };
  const data = zipSync({ [`${base}.py`]: script, [`${base}.safetensors`]: base64Bytes(out.weights) });
  return { name: `${base}.zip`, type: "application/zip", data };
}

/** The files a zip holds, by name (for the tests, and a page reading one back). */
export function zipEntries(data: Uint8Array): Record<string, Uint8Array> {
  return unzipSync(data);
}

export function downloadBytes(name: string, data: Uint8Array, type: string) {
  const url = URL.createObjectURL(new Blob([data as BlobPart], { type }));
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
