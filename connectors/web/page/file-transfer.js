// Files over HTTP, as the page moves them: an upload is one request per file (its bytes as
// the body, its name URI-encoded in X-File-Name, the token in its header); a file the bot
// posted is fetched with the token in its header and handed to the browser as a blob to save.
// A plain link cannot send a header, and a token in a URL would land in history and logs.
/* global document, fetch, setTimeout, URL, File */
import { withToken } from './access-token.js';

/**
 * Upload one file: its upload id, or why it was refused.
 * @param {string} token
 * @param {File} file
 * @returns {Promise<{ id: string } | { message: string }>}
 */
export async function uploadFile(token, file) {
  try {
    const response = await fetch('/api/uploads', {
      method: 'POST',
      headers: withToken(token, {
        'content-type': file.type || 'application/octet-stream',
        'x-file-name': encodeURIComponent(file.name),
      }),
      body: file,
    });
    const answer = /** @type {{ ok: boolean, message?: string, upload?: { id: string } }} */ (
      parseJson(await response.text())
    );
    if (answer.ok && answer.upload) return { id: answer.upload.id };
    return { message: answer.message ?? `The bot refused ${file.name} (${response.status}).` };
  } catch {
    return { message: `Could not upload ${file.name}: is the playground still running?` };
  }
}

/**
 * Save a file the bot posted under its name; resolves with why not, or undefined once saved.
 * @param {string} token
 * @param {string} name
 * @param {string} path
 * @returns {Promise<string | undefined>}
 */
export async function downloadFile(token, name, path) {
  try {
    const response = await fetch(path, { headers: withToken(token) });
    if (!response.ok) {
      const answer = /** @type {{ message?: string }} */ (parseJson(await response.text()));
      return answer.message ?? `The bot could not give ${name} (${response.status}).`;
    }
    const url = URL.createObjectURL(await response.blob());
    const save = document.createElement('a');
    save.href = url;
    save.download = name;
    document.body.append(save);
    save.click();
    save.remove();
    // The browser has taken the blob once the click is handled; let it go a moment later.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    return undefined;
  } catch {
    return `Could not download ${name}: is the playground still running?`;
  }
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseJson(text) {
  return JSON.parse(text);
}
