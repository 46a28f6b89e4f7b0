// The report's player, for a dialogue page (a timeline) and a dataset's event list (no timeline):
// - a click on an event span, a word, a table time or anywhere on the timeline plays from there;
// - ▶ (`data-play-start`, `data-play-end`, optional `data-audio`) plays one event and stops at its
//   end, or starts it again with "loop event";
// - mute and solo per channel (Web Audio: the element's channels split, a gain and a level meter per
//   channel), set up at the first mute or solo;
// - zoom (the timeline's `--pixels-per-second`) between MIN_ZOOM and MAX_ZOOM pixels per second,
//   keeping the time at the middle of the view in place; a zoom button is disabled at its limit;
// - the playhead is followed while "follow playhead" is on; scrolling the timeline turns it off (no
//   snap-back), a click that plays turns it on again.
// No network, works from file://. `window.duplexsynthPlayer` exposes the state for tests.
(() => {
  'use strict';
  const audio = document.getElementById('dialogue-audio');
  const timeline = document.getElementById('timeline');
  const scroller = document.getElementById('scroller');
  const playhead = document.getElementById('playhead');
  const clock = document.getElementById('clock');
  const listening = document.getElementById('listening');
  const loop = document.getElementById('loop');
  const followButton = document.getElementById('follow');
  const zoomLevel = document.getElementById('zoom-level');
  const zoomIn = document.getElementById('zoom-in');
  const zoomOut = document.getElementById('zoom-out');
  // zoom limits, pixels per second: 120 (the page's scale, PIXELS_PER_SECOND in dialogue-page.ts)
  // halved 3 times (a 2-minute dialogue in about 1800 px) and doubled 4 times (one centisecond, the
  // benchmark's time unit, is about 19 px)
  const MIN_ZOOM = 15;
  const MAX_ZOOM = 1920;
  let pixelsPerSecond = timeline
    ? Number(getComputedStyle(timeline).getPropertyValue('--pixels-per-second')) || 120
    : 120;
  let follow = true;
  let segment = null; // { start, end } while one event plays
  let expectedScrollLeft = null; // the last scroll position set here (a scroll event elsewhere is the user's)

  function setFollow(value) {
    follow = value;
    if (followButton) followButton.setAttribute('aria-pressed', String(value));
  }

  function scrollTimelineTo(left) {
    const target = Math.max(0, Math.min(left, scroller.scrollWidth - scroller.clientWidth));
    if (Math.abs(target - scroller.scrollLeft) < 1) return;
    expectedScrollLeft = target;
    scroller.scrollLeft = target;
  }

  function draw() {
    if (clock) clock.textContent = `${audio.currentTime.toFixed(2)} s`;
    if (!timeline) return;
    const x = audio.currentTime * pixelsPerSecond;
    playhead.style.transform = `translateX(${x}px)`;
    if (follow && !audio.paused && (x < scroller.scrollLeft || x > scroller.scrollLeft + scroller.clientWidth - 40)) {
      scrollTimelineTo(x - scroller.clientWidth / 4);
    }
  }

  function play() {
    const playing = audio.play();
    if (playing !== undefined) playing.catch(() => {}); // a browser that refuses playback still seeks
  }

  function seek(seconds) {
    segment = null;
    audio.currentTime = seconds;
    setFollow(true);
    draw();
    play();
  }

  function playSegment(start, end, source) {
    if (source && audio.getAttribute('src') !== source) audio.setAttribute('src', source);
    segment = { start, end: Math.max(end, start + 0.05) };
    audio.currentTime = start;
    setFollow(true);
    draw();
    play();
    checkSegment();
  }

  // the end of a played event: checked every frame while it plays (and on timeupdate, in a hidden tab)
  function checkSegment() {
    if (segment === null || audio.currentTime < segment.end) return;
    if (loop && loop.checked) {
      audio.currentTime = segment.start;
      play();
    } else {
      audio.pause(); // within a frame of the end (the playhead stays where it stopped)
      segment = null;
    }
  }

  // mute and solo: the element's two channels through a gain each
  const muted = new Set();
  const soloed = new Set();
  let graph = null;
  function audioGraph() {
    if (graph !== null) return graph;
    const context = new AudioContext();
    const source = context.createMediaElementSource(audio);
    const splitter = context.createChannelSplitter(2);
    const merger = context.createChannelMerger(2);
    source.connect(splitter);
    const gains = [];
    const analysers = [];
    for (const channel of [0, 1]) {
      const gain = context.createGain();
      const analyser = context.createAnalyser();
      analyser.fftSize = 2048;
      splitter.connect(gain, channel);
      gain.connect(analyser);
      gain.connect(merger, 0, channel);
      gains.push(gain);
      analysers.push(analyser);
    }
    merger.connect(context.destination);
    graph = { context, gains, analysers };
    return graph;
  }
  function applyGains() {
    const { context, gains } = audioGraph();
    for (const channel of [0, 1]) {
      const audible = (soloed.size === 0 || soloed.has(channel)) && !muted.has(channel);
      gains[channel].gain.setValueAtTime(audible ? 1 : 0, context.currentTime);
    }
    for (const button of document.querySelectorAll('button.mute'))
      button.setAttribute('aria-pressed', String(muted.has(Number(button.dataset.channel))));
    for (const button of document.querySelectorAll('button.solo'))
      button.setAttribute('aria-pressed', String(soloed.has(Number(button.dataset.channel))));
    if (context.state === 'suspended') context.resume();
  }
  /** Root-mean-square level of each channel after its gain (what is heard), over the last 2048 samples. */
  function levels() {
    if (graph === null) return null;
    return graph.analysers.map((analyser) => {
      const samples = new Float32Array(analyser.fftSize);
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const sample of samples) sum += sample * sample;
      return Math.sqrt(sum / samples.length);
    });
  }

  function showZoomLimits() {
    if (zoomIn) zoomIn.disabled = pixelsPerSecond >= MAX_ZOOM;
    if (zoomOut) zoomOut.disabled = pixelsPerSecond <= MIN_ZOOM;
  }

  function zoom(factor) {
    if (!timeline) return;
    const next = Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, pixelsPerSecond * factor));
    if (next === pixelsPerSecond) return;
    const middle = (scroller.scrollLeft + scroller.clientWidth / 2) / pixelsPerSecond;
    pixelsPerSecond = next;
    timeline.style.setProperty('--pixels-per-second', String(next));
    if (zoomLevel) zoomLevel.textContent = `${Math.round(next)} px/s`;
    showZoomLimits();
    scrollTimelineTo(middle * next - scroller.clientWidth / 2);
    draw();
  }

  document.addEventListener('click', (event) => {
    const element = event.target instanceof Element ? event.target : null;
    if (element === null) return;
    const button = element.closest('button');
    if (button !== null) {
      if (button.classList.contains('play-event'))
        playSegment(Number(button.dataset.playStart), Number(button.dataset.playEnd), button.dataset.audio);
      else if (button.classList.contains('mute') || button.classList.contains('solo')) {
        const set = button.classList.contains('mute') ? muted : soloed;
        const channel = Number(button.dataset.channel);
        if (set.has(channel)) set.delete(channel);
        else set.add(channel);
        applyGains();
      } else if (button.id === 'zoom-in') zoom(2);
      else if (button.id === 'zoom-out') zoom(0.5);
      else if (button.id === 'follow') {
        setFollow(!follow);
        draw();
      }
      return;
    }
    const target = element.closest('[data-start]');
    if (target !== null) {
      event.preventDefault();
      seek(Number(target.dataset.start));
      return;
    }
    // anywhere else on the timeline (a waveform, a lane, the ruler): the time under the pointer
    if (timeline && timeline.contains(element) && !element.closest('.lane-label')) {
      const x = event.clientX - timeline.getBoundingClientRect().left;
      seek(Math.max(0, Math.min(audio.duration || Number(timeline.dataset.duration), x / pixelsPerSecond)));
    }
  });

  // a page from file:// gets only silence from Web Audio (the browser's CORS rule for file URLs)
  if (location.protocol === 'file:') {
    for (const button of document.querySelectorAll('button.mute, button.solo')) {
      button.disabled = true;
      button.title =
        'mute and solo need the report served: duplexsynth report OUT --serve (a page opened from a file gets no access to its audio samples)';
    }
  }

  if (scroller) {
    scroller.addEventListener('scroll', () => {
      if (expectedScrollLeft !== null && Math.abs(scroller.scrollLeft - expectedScrollLeft) < 2) return;
      expectedScrollLeft = null;
      setFollow(false); // the user scrolls: the view stays where they put it
    });
  }

  // the listening block stays on top: what scrolls into view goes below it, not under it
  if (listening) {
    const reserve = () =>
      document.documentElement.style.setProperty('scroll-padding-top', `${listening.offsetHeight + 8}px`);
    reserve();
    window.addEventListener('resize', reserve);
  }

  let frame = 0;
  const tick = () => {
    checkSegment();
    draw();
    if (graph !== null) {
      const values = levels();
      for (const meter of document.querySelectorAll('meter.level'))
        meter.value = Math.min(1, values[Number(meter.dataset.channel)] * 4);
    }
    if (!audio.paused) frame = requestAnimationFrame(tick);
  };
  audio.addEventListener('play', () => {
    cancelAnimationFrame(frame);
    tick();
  });
  audio.addEventListener('seeked', draw);
  audio.addEventListener('timeupdate', () => {
    checkSegment();
    draw();
  });
  draw();
  showZoomLimits();

  // a dataset's event list: show the rows of the checked event types and loader verdicts
  const filters = document.getElementById('event-filters');
  if (filters) {
    const apply = () => {
      const types = new Set([...filters.querySelectorAll('input[name="type"]:checked')].map((input) => input.value));
      const verdict = filters.querySelector('select[name="loader"]').value;
      let shown = 0;
      for (const row of document.querySelectorAll('tr[data-type]')) {
        const visible = types.has(row.dataset.type) && (verdict === 'any' || row.dataset.kept === verdict);
        row.hidden = !visible;
        if (visible) shown += 1;
      }
      document.getElementById('shown-count').textContent = String(shown);
    };
    filters.addEventListener('change', apply);
    apply();
  }

  window.duplexsynthPlayer = {
    get pixelsPerSecond() {
      return pixelsPerSecond;
    },
    get follow() {
      return follow;
    },
    get segment() {
      return segment;
    },
    /** The zoom limits, pixels per second. */
    zoomLimits: { min: MIN_ZOOM, max: MAX_ZOOM },
    levels,
  };
})();
