/**
 * onnxruntime session settings shared by the services that run ONNX models (DNSMOS, Silero VAD).
 */

/**
 * onnxruntime session configuration entries for `SessionOptions.extra` (keys of onnxruntime's
 * include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h:
 * `session.intra_op.allow_spinning`, `session.inter_op.allow_spinning`; onnxruntime-node joins the
 * nested keys with dots) that make the session's thread pools block instead of spin while they wait
 * for work. Spinning is onnxruntime's default: it burns CPU between runs and, when the cores are
 * shared (a build scores two dialogues at once beside synthesis; tests run side by side), takes it from
 * the threads that have work. Outputs do not change (the same kernels run): DNSMOS scores of six
 * espeak-ng clips are identical either way, and scoring them without spinning takes about 15 % less
 * CPU time on 2 shared cores.
 */
export const ONNXRUNTIME_NO_SPINNING: Readonly<Record<string, unknown>> = Object.freeze({
  session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } },
});
