#!/usr/bin/env bash
# Installs the Debian packages duplexsynth needs (ffmpeg, sox, espeak-ng, Open JTalk + its voice,
# redis-server for the queued build's tests, chromium and a CJK font (fonts-noto-cjk) for the
# report's browser test, sctk and praat for the export tests).
# The Open JTalk voice (hts-voice-nitech-jp-atr503-m001) is in Debian's contrib section, which is not
# in the default sources, so contrib is added first. Idempotent; needs root (or sudo).
#
#   bash scripts/setup-system.sh                      install what is missing
#   DUPLEXSYNTH_PYTHON_CONSUMERS=DIR                  the venv's folder (default
#                                                     ~/.cache/duplexsynth/python-consumers)
#   bash scripts/setup-system.sh --edit-sources FILE  only add contrib to the APT sources file FILE
#                                                     (deb822 when it ends in .sources, else one-line)
set -euo pipefail

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"

# deb822 (/etc/apt/sources.list.d/debian.sources): every `Components:` line without contrib gets
# ` contrib` appended (`main non-free-firmware` -> `main non-free-firmware contrib`).
DEB822_SCRIPT='
/^Components:/ {
  /[[:space:]]contrib([[:space:]]|$)/! s/[[:space:]]*$/ contrib/
}'

# One-line format (/etc/apt/sources.list): every `deb`/`deb-src` line of the Debian archive (a URI
# on debian.org or ending in /debian or /debian-security) that lists `main` but not contrib gets
# contrib right after main (`... bookworm main non-free-firmware` -> `... bookworm main contrib
# non-free-firmware`). Commented lines and other repositories are left alone.
ONE_LINE_SCRIPT='
/^[[:space:]]*deb(-src)?[[:space:]]/ {
  /[[:space:]]contrib([[:space:]]|#|$)/! {
    /(debian\.org[^[:space:]]*|\/debian(-security)?\/?)[[:space:]]/ s/([[:space:]]main)([[:space:]]|#|$)/\1 contrib\2/
  }
}'

# Add contrib to one APT sources file, in place, only when something changes (so a second run
# neither rewrites the file nor needs root).
edit_apt_sources() {
  local file=$1 script edited run=""
  case "$file" in
    *.sources) script=$DEB822_SCRIPT ;;
    *) script=$ONE_LINE_SCRIPT ;;
  esac
  edited=$(mktemp)
  sed -E "$script" "$file" >"$edited"
  if ! cmp -s "$file" "$edited"; then
    [ -w "$file" ] || run=$SUDO
    # cp onto the existing file keeps its owner and mode
    $run cp "$edited" "$file"
  fi
  rm -f "$edited"
}

if [ "${1:-}" = "--edit-sources" ]; then
  shift
  if [ $# -eq 0 ]; then echo "usage: setup-system.sh --edit-sources FILE..." >&2; exit 2; fi
  for file in "$@"; do edit_apt_sources "$file"; done
  exit 0
fi

need=()
command -v ffmpeg >/dev/null || need+=(ffmpeg)
command -v sox >/dev/null || need+=(sox)
command -v espeak-ng >/dev/null || need+=(espeak-ng)
command -v open_jtalk >/dev/null || need+=(open-jtalk open-jtalk-mecab-naist-jdic)
[ -d /usr/share/hts-voice/nitech-jp-atr503-m001 ] || need+=(hts-voice-nitech-jp-atr503-m001 open-jtalk-mecab-naist-jdic)
# Redis (>= 6.2, BullMQ's floor; Debian 12 has 7.0) for the queued build's tests (pipeline/orchestration/queued-build.test.ts start their own redis-server)
command -v redis-server >/dev/null || need+=(redis-server)
# headless Chromium for the HTML report's browser test (pipeline/report/report.test.ts, playwright-core)
command -v chromium >/dev/null || need+=(chromium)
# a CJK font, so the report's Japanese words render as glyphs and not as empty boxes (checked by the
# report's browser test); fc-list comes with fontconfig, a dependency of chromium
[ -n "$(fc-list :lang=ja 2>/dev/null)" ] || need+=(fonts-noto-cjk)
# the exports' consumers that Debian has, run by pipeline/export/export.test.ts: NIST SCTK's
# rttmValidator.pl (sctk) checks the RTTM export, Praat reads the TextGrid export
[ -x /usr/lib/sctk/bin/rttmValidator.pl ] || need+=(sctk)
command -v praat >/dev/null || need+=(praat)
if [ ${#need[@]} -gt 0 ]; then
  for file in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    if [ -f "$file" ]; then edit_apt_sources "$file"; fi
  done
  echo "duplexsynth: installing Debian packages: ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Hugging Face `datasets` for pipeline/export/export-consumers.test.ts (it loads the huggingface export
# with load_dataset), in a venv outside the project: datasets with pyarrow, soundfile to read the audio,
# and torch, which datasets 4 and later import to store an audio column. From the pip index pip is
# configured with (PyPI, or a local one); when none can provide them, one line and the test skips.
# An existing venv is checked by module lookup only (no import: torch takes seconds), so a second run
# costs a few tens of milliseconds; after a failed try ({venv}.failed, holding the log) the next try is
# a day later (delete that file to try at once).
PYTHON_CONSUMERS=${DUPLEXSYNTH_PYTHON_CONSUMERS:-$HOME/.cache/duplexsynth/python-consumers}
PYTHON_CONSUMER_MODULES="datasets pyarrow soundfile torch"
has_python_consumers() {
  "$PYTHON_CONSUMERS/bin/python" -c 'import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)' $PYTHON_CONSUMER_MODULES 2>/dev/null
}
if ! has_python_consumers && [ -z "$(find "$PYTHON_CONSUMERS.failed" -mmin -1440 2>/dev/null)" ]; then
  mkdir -p "$(dirname "$PYTHON_CONSUMERS")"
  log=$PYTHON_CONSUMERS.failed
  echo "duplexsynth: making a Python venv with datasets for the export tests in $PYTHON_CONSUMERS (log: $log)" >&2
  # PIP_RETRIES=0: an unreachable index fails at once instead of after five retries per package
  if python3 -m venv "$PYTHON_CONSUMERS" >"$log" 2>&1 &&
    PIP_RETRIES=0 PIP_TIMEOUT=15 PIP_DISABLE_PIP_VERSION_CHECK=1 "$PYTHON_CONSUMERS/bin/pip" install --quiet datasets soundfile torch >>"$log" 2>&1 &&
    has_python_consumers; then
    rm -f "$log"
  else
    rm -rf "$PYTHON_CONSUMERS"
    echo "duplexsynth: no pip index could provide datasets, soundfile and torch (see $log): the Hugging Face datasets test will skip" >&2
  fi
fi
exit 0
