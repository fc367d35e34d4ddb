// The playground's one secret: a random token in the URL it prints. Anyone who can reach
// 127.0.0.1 (another local user, a web page in the browser doing cross-origin requests, a
// DNS-rebinding site) could otherwise drive the bot and approve its calls, so every request
// must carry it, and it is compared in constant time (hashes of equal length, then
// timingSafeEqual: neither the length nor a common prefix leaks through timing).
//
// The token is kept in the store (`web:access-token`), and so is the last port
// (page-address.ts): a restart keeps the same URL, so an open page reconnects by itself. Whoever can read the store can
// read every conversation in it anyway.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type Keyv from 'keyv';
import { z } from 'zod';

const TOKEN_KEY = 'web:access-token';

/** 32 random bytes, URL-safe: unguessable, and fine in a query string as it is. */
export function newAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The token this store's playground uses, made (and kept) the first time. */
export async function storedAccessToken(keyv: Keyv): Promise<string> {
  const known = z.string().min(32).safeParse(await keyv.get<unknown>(TOKEN_KEY));
  if (known.success) return known.data;
  const token = newAccessToken();
  await keyv.set(TOKEN_KEY, token);
  return token;
}

export class AccessToken {
  private readonly digest: Buffer;

  constructor(readonly value: string) {
    this.digest = sha256(value);
  }

  /** Whether `given` is the token. */
  matches(given: string): boolean {
    return timingSafeEqual(sha256(given), this.digest);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
