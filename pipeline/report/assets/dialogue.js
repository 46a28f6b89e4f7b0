// Dialogue page of the duplexsynth report: a click on an event span, a word or an event-table time
// moves playback to that time and plays; a playhead follows the audio. No network, works from file://.
(() => {
  'use strict';
  const audio = document.getElementById('dialogue-audio');
  const timeline = document.getElementById('timeline');
  const scroller = document.getElementById('scroller');
  const playhead = document.getElementById('playhead');
  const clock = document.getElementById('clock');
  const pixelsPerSecond = Number(timeline.dataset.pixelsPerSecond);

  function draw() {
    const x = audio.currentTime * pixelsPerSecond;
    playhead.style.transform = `translateX(${x}px)`;
    clock.textContent = `${audio.currentTime.toFixed(2)} s`;
    if (!audio.paused && (x < scroller.scrollLeft || x > scroller.scrollLeft + scroller.clientWidth - 40)) {
      scroller.scrollLeft = Math.max(0, x - scroller.clientWidth / 4);
    }
  }

  function seek(seconds) {
    audio.currentTime = seconds;
    draw();
    const playing = audio.play();
    if (playing !== undefined) playing.catch(() => {}); // a browser that refuses playback still seeks
  }

  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('[data-start]') : null;
    if (target === null) return;
    event.preventDefault();
    seek(Number(target.dataset.start));
  });

  let frame = 0;
  const follow = () => {
    draw();
    if (!audio.paused) frame = requestAnimationFrame(follow);
  };
  audio.addEventListener('play', () => {
    cancelAnimationFrame(frame);
    follow();
  });
  audio.addEventListener('seeked', draw);
  audio.addEventListener('timeupdate', draw);
  draw();
})();
