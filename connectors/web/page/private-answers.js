// Private answers ("only visible to you"): the page's alone, kept here, never stored, and drawn
// where they belong in time, right after what they answer, not below everything. Each is kept
// under where it was shown: a thread's id, or '' for the channel. When a thread goes (/forget
// deletes it), what was said privately in it moves to the channel: the confirmation of the
// /forget itself must still be seen.
import { whisperElement } from './render.js';

/** @typedef {import('./render.js').Person} Person */
/** @typedef {{ text: string, at: number }} Whisper */

export class PrivateAnswers {
  /**
   * @param {HTMLElement} channelList
   * @param {HTMLElement} threadList
   * @param {() => Person} bot
   */
  constructor(channelList, threadList, bot) {
    this.channelList = channelList;
    this.threadList = threadList;
    this.bot = bot;
    /** @type {Map<string, Whisper[]>} */
    this.kept = new Map();
  }

  /**
   * Show one: in the thread it concerns when that thread is open, else in the channel.
   * @param {string} text
   * @param {string | undefined} threadId
   * @param {string | undefined} openThread
   * @param {number} at
   * @returns {HTMLElement} the list it went into
   */
  show(text, threadId, openThread, at) {
    const where = openThread && (threadId === undefined || threadId === openThread) ? openThread : '';
    const list = where ? this.threadList : this.channelList;
    this.keep(where, { text, at });
    this.place(list, { text, at });
    return list;
  }

  /**
   * Draw again those kept for a place (a thread's id, or '' for the channel) into its list.
   * @param {string} where
   */
  redraw(where) {
    for (const whisper of this.kept.get(where) ?? []) this.place(where ? this.threadList : this.channelList, whisper);
  }

  /**
   * A thread is gone: what was said in it privately is shown in the channel from now on.
   * @param {string} threadId
   */
  moveToChannel(threadId) {
    const moved = this.kept.get(threadId) ?? [];
    this.kept.delete(threadId);
    for (const whisper of moved) {
      this.keep('', whisper);
      this.place(this.channelList, whisper);
    }
  }

  /**
   * Where a message of time `at` goes at the end of a list: before the private answers at its
   * end that are later than it (null: at the very end).
   * @param {HTMLElement} list
   * @param {number} at
   * @returns {Element | null}
   */
  laterThan(list, at) {
    let before = null;
    for (
      let node = list.lastElementChild;
      node?.classList.contains('whisper') && Number(/** @type {HTMLElement} */ (node).dataset.at) > at;
      node = node.previousElementSibling
    ) {
      before = node;
    }
    return before;
  }

  /**
   * @param {string} where
   * @param {Whisper} whisper
   */
  keep(where, whisper) {
    this.kept.set(where, [...(this.kept.get(where) ?? []), whisper]);
  }

  /**
   * A private answer in a list, after everything of its time or earlier.
   * @param {HTMLElement} list
   * @param {Whisper} whisper
   */
  place(list, whisper) {
    const item = whisperElement(whisper.text, this.bot(), whisper.at);
    item.dataset.at = String(whisper.at);
    let after = list.lastElementChild;
    while (after && Number(/** @type {HTMLElement} */ (after).dataset.at) > whisper.at)
      after = after.previousElementSibling;
    list.insertBefore(item, after ? after.nextElementSibling : list.firstElementChild);
  }
}
