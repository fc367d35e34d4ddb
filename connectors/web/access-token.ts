// The playground's one secret: a random token in the URL it prints. Anyone who can reach
// 127.0.0.1 (another local user, a web page in the browser doing cross-origin requests, a
// DNS-rebinding site, another local server the browser visits) could otherwise drive the bot
// and approve its calls, so every request for data or an action must carry it, and it is
// compared in constant time (hashes of equal length, then timingSafeEqual: neither the length
// nor a common prefix leaks through timing).
//
// A new token at each start, unless the operator fixes one in PLAYGROUND_TOKEN: a token that
// leaked (a screenshot, a shared terminal) is dead at the next start. It is never written to
// the store; earlier versions kept it there (`web:access-token`), and that key is removed.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type Keyv from 'keyv';

/** Where earlier versions kept a token that never changed: deleted at start, never read. */
const RETIRED_TOKEN_KEY = 'web:access-token';

/** 32 random bytes, URL-safe: unguessable, and fine in a URL's fragment as it is. */
function newAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The token for this start: the fixed one when the operator set PLAYGROUND_TOKEN, else a new one. */
export function accessTokenForStart(fixed: string | undefined): string {
  return fixed ?? newAccessToken();
}

/** Remove the token an earlier version kept in the store: it would otherwise outlive every start. */
export async function forgetStoredToken(keyv: Keyv): Promise<void> {
  await keyv.delete(RETIRED_TOKEN_KEY);
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
