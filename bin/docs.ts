// `npm run docs`: writes docs/configuration.md from the settings' schema
// (src/config/settings-page.ts). A test fails while the committed page differs from it.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsPage } from '../src/config/settings-page.js';

const page = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(page, settingsPage());
console.log(`wrote ${page}`);
