/** The gateway's version: package.json's, so the two cannot drift (esbuild keeps only this field). */
export { version as GATEWAY_VERSION } from '../package.json';
