#!/usr/bin/env bash
# Installs the Debian packages duplexsynth needs (ffmpeg, sox, espeak-ng, Open JTalk + its voice,
# redis-server for the queued build's tests, chromium and a CJK font (fonts-noto-cjk) for the
# report's browser test, sctk and praat for the export tests).
# The Open JTalk voice (hts-voice-nitech-jp-atr503-m001) is in Debian's contrib section, which is not
# in the default sources, so contrib is added first. Idempotent; needs root (or sudo).
#
#   bash scripts/setup-system.sh                      install what is missing
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
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
for file in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -f "$file" ]; then edit_apt_sources "$file"; fi
done
echo "duplexsynth: installing Debian packages: ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
