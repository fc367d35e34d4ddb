// The page's composers: a textarea that sends with Enter, and the files that go with the
// message: 📎 opens the file chooser, a drop on the composer's pane or a paste into it adds
// files too. They show as chips (removable) until sent; a file over MAX_FILE_BYTES is refused
// here, before any upload. Sending uploads each file first (app.js), then posts the message
// with their ids; what the person typed and attached stays if an upload is refused.
/* global window, File, DragEvent, HTMLTextAreaElement, HTMLFormElement, HTMLButtonElement, HTMLInputElement */
import { element, fileChip, sizeText } from './render.js';

/**
 * What a composer asks of the page.
 * @typedef {{ maxFileBytes: () => number,
 *   whisper: (text: string, thread: string | undefined) => void,
 *   upload: (file: File, thread: string | undefined) => Promise<string | undefined>,
 *   post: (text: string, thread: string | undefined, files: string[]) => Promise<void> }} ComposerActions
 */

/**
 * A composer: Enter sends, Shift+Enter starts a new line; 📎 (or a drop on `zone`, or a paste)
 * adds files, shown as chips until sent. Sending uploads the files first; if one is refused,
 * the message is not sent and the text and files stay for another try.
 * @param {HTMLElement} form
 * @param {HTMLElement} zone
 * @param {() => string | undefined} threadOf
 * @param {ComposerActions} actions
 */
export function composer(form, zone, threadOf, actions) {
  const input = form.querySelector('textarea');
  const picker = form.querySelector('input[type="file"]');
  const attach = form.querySelector('button.attach');
  const sendButton = form.querySelector('button.send');
  const chips = form.querySelector('.attached');
  if (
    !(form instanceof HTMLFormElement) ||
    !(input instanceof HTMLTextAreaElement) ||
    !(picker instanceof HTMLInputElement)
  )
    return;
  if (
    !(attach instanceof HTMLButtonElement) ||
    !(sendButton instanceof HTMLButtonElement) ||
    !(chips instanceof window.HTMLElement)
  )
    return;
  /** @type {File[]} */
  let files = [];
  let sending = false;

  const drawFiles = () => {
    chips.replaceChildren(
      ...files.map((file, index) => {
        const item = element('li');
        const chip = fileChip(file);
        const remove = /** @type {HTMLButtonElement} */ (element('button', 'remove', '✕'));
        remove.type = 'button';
        remove.title = `Remove ${file.name}`;
        remove.setAttribute('aria-label', `Remove ${file.name}`);
        remove.addEventListener('click', () => {
          files = files.filter((_, other) => other !== index);
          drawFiles();
        });
        chip.append(remove);
        item.append(chip);
        return item;
      }),
    );
    chips.hidden = files.length === 0;
  };
  /** @param {Iterable<File>} added */
  const addFiles = (added) => {
    for (const file of added) {
      const max = actions.maxFileBytes();
      if (file.size > max)
        actions.whisper(
          `${file.name} is ${sizeText(file.size)}, over ${sizeText(max)}, the most the playground takes in one file (MAX_FILE_BYTES).`,
          threadOf(),
        );
      else files.push(file);
    }
    drawFiles();
  };
  const setSending = (/** @type {boolean} */ value) => {
    sending = value;
    attach.disabled = value;
    sendButton.disabled = value;
  };

  const submit = async () => {
    const text = input.value.trim();
    if (sending || (!text && files.length === 0)) return;
    const thread = threadOf();
    setSending(true);
    try {
      /** @type {string[]} */
      const ids = [];
      for (const file of files) {
        const id = await actions.upload(file, thread);
        if (id === undefined) return;
        ids.push(id);
      }
      input.value = '';
      files = [];
      drawFiles();
      await actions.post(text, thread, ids);
    } finally {
      setSending(false);
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  });
  attach.addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => {
    addFiles(picker.files ?? []);
    picker.value = '';
  });
  zone.addEventListener('dragover', (event) => {
    if (!event.dataTransfer?.types.includes('Files')) return;
    event.preventDefault();
    zone.classList.add('dropping');
  });
  zone.addEventListener('dragleave', (event) => {
    if (event.relatedTarget instanceof window.Node && zone.contains(event.relatedTarget)) return;
    zone.classList.remove('dropping');
  });
  zone.addEventListener('drop', (event) => {
    zone.classList.remove('dropping');
    if (!event.dataTransfer?.files.length) return;
    event.preventDefault();
    addFiles(event.dataTransfer.files);
    input.focus();
  });
  // A screenshot pasted into the composer is attached, as chat apps do.
  input.addEventListener('paste', (event) => {
    if (!event.clipboardData?.files.length) return;
    event.preventDefault();
    addFiles(event.clipboardData.files);
  });
}

/** A file dropped outside a composer's pane would make the browser leave the page to show it. */
export function keepDropsOnPage() {
  for (const type of ['dragover', 'drop']) {
    window.addEventListener(type, (event) => {
      if (/** @type {DragEvent} */ (event).dataTransfer?.types.includes('Files')) event.preventDefault();
    });
  }
}
