/**
 * What the loopback speech servers of this folder share: real speech for any text (espeak-ng, so
 * downstream speech detection and word timing work on it), scriptable faults, a capacity gate (a
 * CosyVoice FastAPI process serves one request at a time), and request records with concurrency
 * counts. Test and benchmark code only; servers listen on 127.0.0.1.
 *
 * Faults: loopback-faults.ts; speech and audio: loopback-audio.ts; HTTP helpers: loopback-http.ts
 * (all re-exported here).
 */
export * from './loopback-faults.ts';
export * from './loopback-audio.ts';
export * from './loopback-http.ts';
