// How discord.js's REST client sends a request: its own strategy, except that a multipart body
// (a message with files) is encoded to bytes here first.
//
// Why: @discordjs/rest builds a multipart body as a WHATWG `FormData` and hands it to its
// bundled undici 6's `request()`, which passes it on to the process-wide dispatcher. undici
// installs that dispatcher under a global symbol shared by every copy of undici, and the copy
// that loads first wins. Under `npm start` our own undici 7 (fetch_url) loads first, and its
// dispatcher cannot stream undici 6's form: the upload fails with `TypeError: action is not a
// function` (undici/lib/web/fetch/body.js) and a card whose arguments are attached never gets
// its buttons. Bytes with their multipart content type mean the same to every undici.
import { DefaultRestOptions, type RESTOptions } from 'discord.js';

type MakeRequest = RESTOptions['makeRequest'];
type RequestInit = Parameters<MakeRequest>[1];

/** A FormData from any realm or copy of undici (`instanceof` would only know one of them). */
function isFormData(body: unknown): body is FormData {
  return Object.prototype.toString.call(body) === '[object FormData]';
}

export const makeDiscordRequest: MakeRequest = async (url, init) => {
  if (!isFormData(init.body)) return DefaultRestOptions.makeRequest(url, init);
  // The runtime's own Response encodes the form exactly as fetch would, boundary included.
  const encoded = new Response(init.body);
  const body = new Uint8Array(await encoded.arrayBuffer());
  const headers: Record<string, string> = {
    ...(init.headers as Record<string, string> | undefined),
    'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data',
  };
  return DefaultRestOptions.makeRequest(url, { ...init, body, headers } satisfies RequestInit);
};
