/** The gateway's version, as package.json states it (a test keeps the two in step). */
export const GATEWAY_VERSION = '0.2.0';
