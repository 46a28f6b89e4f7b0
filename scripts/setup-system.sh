#!/usr/bin/env bash
# Installs the Debian packages duplexsynth needs (ffmpeg, sox, espeak-ng, Open JTalk + its voice).
# The Open JTalk voice (hts-voice-nitech-jp-atr503-m001) is in Debian's contrib section, which is not
# in the default sources, so contrib is added first. Idempotent; needs root (or sudo).
set -euo pipefail
need=()
command -v ffmpeg >/dev/null || need+=(ffmpeg)
command -v sox >/dev/null || need+=(sox)
command -v espeak-ng >/dev/null || need+=(espeak-ng)
command -v open_jtalk >/dev/null || need+=(open-jtalk open-jtalk-mecab-naist-jdic)
[ -d /usr/share/hts-voice/nitech-jp-atr503-m001 ] || need+=(hts-voice-nitech-jp-atr503-m001 open-jtalk-mecab-naist-jdic)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  if ! grep -q '^Components:.*contrib' /etc/apt/sources.list.d/debian.sources; then
    $SUDO sed -i -E 's/^(Components: main)$/\1 contrib/' /etc/apt/sources.list.d/debian.sources
  fi
elif [ -f /etc/apt/sources.list ] && ! grep -q contrib /etc/apt/sources.list; then
  $SUDO sed -i -E 's/^(deb .* main)$/\1 contrib/' /etc/apt/sources.list
fi
echo "duplexsynth: installing Debian packages: ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
