/**
 * The SDK's version: the one place it is recorded. `sdk/build.mjs` reads it to name the versioned
 * script path (`/js/v<version>/canopy.js`, immutable) beside the evergreen one (`/js/v<major>/canopy.js`)
 * and writes it into `dist/sdk/manifest.json` for the API to serve.
 */
export const SDK_VERSION = '3.0.0'
