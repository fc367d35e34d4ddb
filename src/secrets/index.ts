// Secrets' public surface: collect the configured secret values, mask them in whatever
// leaves the process (whole texts and streamed ones), and check the `.env` file's permissions
// at start-up.
export { SecretMasker } from './secret-masker.js';
export { configSecretValues, mcpSecretValues } from './secret-values.js';
export { envFileWarning } from './env-file.js';
