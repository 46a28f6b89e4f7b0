;; Per-sample audio kernels (WebAssembly SIMD), loaded by audio-kernels.ts; audio-kernels.wasm is this
;; file compiled by `npm run build:wasm` (scripts/build-wasm.ts: WABT's wat2wasm; a test compiles it
;; again and compares). Each gives the numbers of the JavaScript loop it stands for (the tests compare
;; them; the 16-bit encoding against all 2^32 float32 values).
;;
;; Encoding (encodeStereo, encodeMono): each sample x (float32, full scale 1.0) becomes round(x * 32768)
;; clamped to [-32768, 32767], halves towards +infinity, NaN as 0: the integer raw-audio.ts
;; `toPcm16Integer` gives and an Int16Array stores. In float32: y = x * 32768 is exact (a power of two),
;; r = floor(y) is exact and so is y - r (the fraction of a float32 is a float32), and round half up is
;; r + 1 where y - r >= 0.5, else r. (floor(y + 0.5) is not: for y = 0.5 - 2^-25 the sum rounds up to 1.)
;; The saturating conversion gives 0 for NaN (y - r is NaN too, so nothing is added) and the extreme
;; integers for ±Infinity (y - r is NaN), which the clamp brings into range; a float32 of 2^24 or more
;; is an integer, so nothing is added to a saturated value.
;;
;; Decoding (decodePcm16): integer / 32768, exact in float32 (a power of two).
;;
;; Rounding to the grid (quantize): the encoding's integer r, clamped, as float32 r / 32768 + 0, the
;; value raw-audio.ts `quantizeToPcm16` writes: the same floor and half step in float32, the clamp by
;; f32x4.min and max (which keep NaN, as JavaScript's loop does: its bits may differ), + 0 turning -0
;; into +0. ±Infinity: y - r is NaN, nothing is added and the clamp gives the extreme value.
;;
;; Grid test (onGrid): 1 when every sample x is on the 16-bit grid, i.e. y = x * 32768 is an integer
;; (floor(y) = y, false for NaN) in [-32768, 32767] and x is not -0 (bits 0x80000000), as raw-audio.ts
;; `isOnPcm16Grid`; else 0.
;;
;; Mixing (add): float32 addition. JavaScript adds the two float32 values in float64 and rounds the sum
;; to float32, which is the float32 sum (float64 holds more than twice float32's 24 bits, so the double
;; rounding is innocuous: Figueroa, "When is double rounding innocuous?", SIGNUM 1995). NaN bits may
;; differ (WebAssembly leaves them open); every NaN is written as 0.
;;
;; Block peaks (blockPeaks): the largest |x| of each block, NaN ignored (pmax keeps the running value
;; unless it is below the new one, as JavaScript's `if (magnitude > peak) peak = magnitude`), 0 for a
;; block of zeros; the largest of a set of numbers does not depend on the order they are compared in.
;;
;; Memory: 16 pages (1 MiB) the caller fills and reads back (byte offsets given by the caller, 16-byte
;; aligned); nothing is kept between calls. Loop bodies are written out rather than calling a shared
;; function: V8 does not inline calls between WebAssembly functions, and a call per vector cost 25 %.
(module
  (memory (export "memory") 16)

  ;; encodeStereo(left, right, out, frames): the frames (a multiple of 4) of two float32 channels at
  ;; byte offsets `left` and `right` as interleaved 16-bit frames at `out` (one 32-bit word per frame:
  ;; left in the low half, right in the high half, little-endian)
  (func (export "encodeStereo") (param $left i32) (param $right i32) (param $out i32) (param $frames i32)
    (local $offset i32) (local $end i32) (local $y v128) (local $r v128) (local $low v128) (local $high v128)
    (local.set $end (i32.shl (local.get $frames) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $offset) (local.get $end)))
        ;; left: y = x * 32768, r = floor(y), r + (y - r >= 0.5) (the mask is -1 where true), clamped
        (local.set $y (f32x4.mul (v128.load (i32.add (local.get $left) (local.get $offset))) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $r (f32x4.floor (local.get $y)))
        (local.set $low
          (i32x4.min_s
            (i32x4.max_s
              (i32x4.sub
                (i32x4.trunc_sat_f32x4_s (local.get $r))
                (f32x4.ge (f32x4.sub (local.get $y) (local.get $r)) (v128.const f32x4 0.5 0.5 0.5 0.5)))
              (v128.const i32x4 -32768 -32768 -32768 -32768))
            (v128.const i32x4 32767 32767 32767 32767)))
        ;; right: the same
        (local.set $y (f32x4.mul (v128.load (i32.add (local.get $right) (local.get $offset))) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $r (f32x4.floor (local.get $y)))
        (local.set $high
          (i32x4.min_s
            (i32x4.max_s
              (i32x4.sub
                (i32x4.trunc_sat_f32x4_s (local.get $r))
                (f32x4.ge (f32x4.sub (local.get $y) (local.get $r)) (v128.const f32x4 0.5 0.5 0.5 0.5)))
              (v128.const i32x4 -32768 -32768 -32768 -32768))
            (v128.const i32x4 32767 32767 32767 32767)))
        (v128.store
          (i32.add (local.get $out) (local.get $offset))
          (v128.or
            (v128.and (local.get $low) (v128.const i32x4 0xffff 0xffff 0xffff 0xffff))
            (i32x4.shl (local.get $high) (i32.const 16))))
        (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
        (br $next))))

  ;; encodeMono(samples, out, count): `count` (a multiple of 4) float32 samples at byte offset `samples`
  ;; as 16-bit integers at `out`
  (func (export "encodeMono") (param $samples i32) (param $out i32) (param $count i32)
    (local $offset i32) (local $end i32) (local $y v128) (local $r v128)
    (local.set $end (i32.shl (local.get $count) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $offset) (local.get $end)))
        (local.set $y (f32x4.mul (v128.load (i32.add (local.get $samples) (local.get $offset))) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $r (f32x4.floor (local.get $y)))
        ;; the four int16 of the narrowed vector are its low 8 bytes
        (v128.store64_lane 0
          (i32.add (local.get $out) (i32.shr_u (local.get $offset) (i32.const 1)))
          (i16x8.narrow_i32x4_s
            (i32x4.min_s
              (i32x4.max_s
                (i32x4.sub
                  (i32x4.trunc_sat_f32x4_s (local.get $r))
                  (f32x4.ge (f32x4.sub (local.get $y) (local.get $r)) (v128.const f32x4 0.5 0.5 0.5 0.5)))
                (v128.const i32x4 -32768 -32768 -32768 -32768))
              (v128.const i32x4 32767 32767 32767 32767))
            (v128.const i32x4 0 0 0 0)))
        (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
        (br $next))))

  ;; decodePcm16(in, out, count): `count` (a multiple of 8) 16-bit little-endian integers at byte offset
  ;; `in` as float32 integer / 32768 at `out`
  (func (export "decodePcm16") (param $in i32) (param $out i32) (param $count i32)
    (local $offset i32) (local $end i32) (local $integers v128)
    (local.set $end (i32.shl (local.get $count) (i32.const 1)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $offset) (local.get $end)))
        (local.set $integers (v128.load (i32.add (local.get $in) (local.get $offset))))
        ;; eight integers in, two vectors of four floats out (the output offset is twice the input's)
        (v128.store
          (i32.add (local.get $out) (i32.shl (local.get $offset) (i32.const 1)))
          (f32x4.mul
            (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $integers)))
            (v128.const f32x4 0x1p-15 0x1p-15 0x1p-15 0x1p-15)))
        (v128.store offset=16
          (i32.add (local.get $out) (i32.shl (local.get $offset) (i32.const 1)))
          (f32x4.mul
            (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $integers)))
            (v128.const f32x4 0x1p-15 0x1p-15 0x1p-15 0x1p-15)))
        (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
        (br $next))))

  ;; quantize(in, out, count): `count` (a multiple of 4) float32 samples at byte offset `in` rounded to
  ;; the 16-bit grid as float32 at `out` (which may be `in`)
  (func (export "quantize") (param $in i32) (param $out i32) (param $count i32)
    (local $offset i32) (local $end i32) (local $y v128) (local $r v128)
    (local.set $end (i32.shl (local.get $count) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $offset) (local.get $end)))
        (local.set $y (f32x4.mul (v128.load (i32.add (local.get $in) (local.get $offset))) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $r (f32x4.floor (local.get $y)))
        ;; r + 1 where y - r >= 0.5 (the mask's bits and those of 1.0 give 1.0 where true, +0 elsewhere)
        (local.set $r
          (f32x4.add
            (local.get $r)
            (v128.and
              (f32x4.ge (f32x4.sub (local.get $y) (local.get $r)) (v128.const f32x4 0.5 0.5 0.5 0.5))
              (v128.const f32x4 1 1 1 1))))
        (v128.store
          (i32.add (local.get $out) (local.get $offset))
          (f32x4.add
            (f32x4.mul
              (f32x4.min (f32x4.max (local.get $r) (v128.const f32x4 -32768 -32768 -32768 -32768)) (v128.const f32x4 32767 32767 32767 32767))
              (v128.const f32x4 0x1p-15 0x1p-15 0x1p-15 0x1p-15))
            (v128.const f32x4 0 0 0 0)))
        (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
        (br $next))))

  ;; onGrid(samples, count) -> 1 or 0: whether all `count` (a multiple of 4) float32 at byte offset
  ;; `samples` are on the 16-bit grid
  (func (export "onGrid") (param $samples i32) (param $count i32) (result i32)
    (local $offset i32) (local $end i32) (local $x v128) (local $y v128) (local $ok v128)
    (local.set $end (i32.shl (local.get $count) (i32.const 2)))
    (local.set $ok (v128.const i32x4 -1 -1 -1 -1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $offset) (local.get $end)))
        (local.set $x (v128.load (i32.add (local.get $samples) (local.get $offset))))
        (local.set $y (f32x4.mul (local.get $x) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $ok
          (v128.and
            (local.get $ok)
            (v128.and
              (v128.and
                (f32x4.eq (f32x4.floor (local.get $y)) (local.get $y))
                (f32x4.ge (local.get $y) (v128.const f32x4 -32768 -32768 -32768 -32768)))
              (v128.andnot
                (f32x4.le (local.get $y) (v128.const f32x4 32767 32767 32767 32767))
                (i32x4.eq (local.get $x) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000))))))
        (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
        (br $next)))
    (i32x4.all_true (local.get $ok)))

  ;; add(target, source, count): adds `count` (a multiple of 4) float32 at byte offset `source` to those
  ;; at `target`, in place
  (func (export "add") (param $target i32) (param $source i32) (param $count i32)
    (local $offset i32) (local $end i32)
    (local.set $end (i32.shl (local.get $count) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $offset) (local.get $end)))
        (v128.store
          (i32.add (local.get $target) (local.get $offset))
          (f32x4.add
            (v128.load (i32.add (local.get $target) (local.get $offset)))
            (v128.load (i32.add (local.get $source) (local.get $offset)))))
        (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
        (br $next))))

  ;; blockPeaks(samples, out, blocks, blockSize): for each of `blocks` blocks of `blockSize` (a multiple
  ;; of 4) float32 at byte offset `samples`, the largest magnitude as one float32 at `out`
  (func (export "blockPeaks") (param $samples i32) (param $out i32) (param $blocks i32) (param $blockSize i32)
    (local $block i32) (local $offset i32) (local $end i32) (local $peak v128)
    (block $done
      (loop $nextBlock
        (br_if $done (i32.ge_u (local.get $block) (local.get $blocks)))
        (local.set $peak (v128.const f32x4 0 0 0 0))
        (local.set $end (i32.add (local.get $offset) (i32.shl (local.get $blockSize) (i32.const 2))))
        (block $blockDone
          (loop $next
            (br_if $blockDone (i32.ge_u (local.get $offset) (local.get $end)))
            (local.set $peak (f32x4.pmax (local.get $peak) (f32x4.abs (v128.load (i32.add (local.get $samples) (local.get $offset))))))
            (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
            (br $next)))
        ;; the largest of the four lanes (none is NaN)
        (local.set $peak (f32x4.pmax (local.get $peak) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $peak) (local.get $peak))))
        (local.set $peak (f32x4.pmax (local.get $peak) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $peak) (local.get $peak))))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $block) (i32.const 2)))
          (f32x4.extract_lane 0 (local.get $peak)))
        (local.set $block (i32.add (local.get $block) (i32.const 1)))
        (br $nextBlock))))
)
