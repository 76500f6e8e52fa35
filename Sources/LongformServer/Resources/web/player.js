// The web player: every change comes from the server's event stream, so every open page shows
// the same state; the buttons only send commands.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { playbackState: "stopped", playlist: [], currentIndex: null, currentId: null, offset: 0, volume: 1, isMuted: false, route: "" };
let seeking = false;

// Icons as inline SVG: no font needs to carry the glyphs.
const svg = (path) => '<svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><path fill="currentColor" d="' + path + '"/></svg>';
const ICONS = {
  play: svg("M7 4v16l13-8z"),
  pause: svg("M6 4h4v16H6zM14 4h4v16h-4z"),
  previous: svg("M6 5h2v14H6zM20 5v14L9 12z"),
  next: svg("M16 5h2v14h-2zM4 5v14l11-7z"),
  volume: svg("M4 9v6h4l5 4V5L8 9zM16 8a5 5 0 0 1 0 8v-2a3 3 0 0 0 0-4zM16 4a9 9 0 0 1 0 16v-2a7 7 0 0 0 0-12z"),
  muted: svg("M4 9v6h4l5 4V5L8 9zM16 9l1.4-1.4L19.5 9.7l2.1-2.1L23 9l-2.1 2.1L23 13.2l-1.4 1.4-2.1-2.1-2.1 2.1L16 13.2l2.1-2.1z"),
  grip: svg("M4 7h16v2H4zM4 11h16v2H4zM4 15h16v2H4z"),
};

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  if (!response.ok) {
    let message = response.statusText;
    try { message = (await response.json()).error || message; } catch (_) {}
    showMessage(message);
    throw new Error(message);
  }
  showMessage("");
  const type = response.headers.get("Content-Type") || "";
  return type.includes("json") ? response.json() : null;
}

function showMessage(text) { $("message").textContent = text; }

function clock(seconds) {
  if (!isFinite(seconds) || seconds < 0) seconds = 0;
  const total = Math.floor(seconds);
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return (h > 0 ? h + ":" : "") + mm + ":" + String(s).padStart(2, "0");
}

function currentItem() {
  return state.playlist.find((item) => item.id === state.currentId) || null;
}

function renderNowPlaying() {
  const item = currentItem();
  $("title").textContent = item ? item.displayTitle : "Nothing playing";
  $("artist").textContent = item ? [item.artist, item.album].filter(Boolean).join(" — ") : "";
  const duration = item && item.duration ? item.duration : 0;
  $("progress").max = duration;
  $("duration").textContent = clock(duration);
  renderOffset();
  const playing = state.playbackState === "playing";
  $("play-pause").innerHTML = playing ? ICONS.pause : ICONS.play;
  $("play-pause").title = playing ? "Pause" : "Play";
  $("play-pause").setAttribute("aria-label", $("play-pause").title);
  document.title = item ? item.displayTitle + " · Longform" : "Longform";
  renderArtwork();
}

function renderOffset() {
  if (!seeking) $("progress").value = state.offset || 0;
  $("elapsed").textContent = clock(state.offset || 0);
}

let artworkFor = null;
async function renderArtwork() {
  if (artworkFor === state.currentId) return;
  const asked = state.currentId;
  artworkFor = asked;
  let url = null;
  try {
    url = asked ? (await api("GET", "/api/now-playing")).artworkURL : null;
  } catch (_) {
    artworkFor = null; // ask again at the next change
  }
  // The item may have changed while the answer was on its way.
  if (asked !== state.currentId) return;
  $("artwork").hidden = !url;
  $("artwork-placeholder").hidden = !!url;
  if (url) $("artwork").src = url;
}

function renderVolume() {
  $("volume").value = state.volume;
  $("mute").innerHTML = state.isMuted ? ICONS.muted : ICONS.volume;
  $("mute").title = state.isMuted ? "Unmute" : "Mute";
}

// While a row is dragged the list is not redrawn (the row would be torn out from under the
// pointer); the redraw waits for the drop.
let dragging = false;
let redrawAfterDrag = false;

function renderPlaylist() {
  if (dragging) { redrawAfterDrag = true; return; }
  const list = $("playlist");
  list.replaceChildren();
  state.playlist.forEach((item, index) => {
    const row = document.createElement("li");
    row.dataset.id = item.id;
    if (item.id === state.currentId) row.classList.add("current");
    if (item.failure) { row.classList.add("failed"); row.title = item.failure; }
    const handle = document.createElement("span");
    handle.className = "handle";
    handle.innerHTML = ICONS.grip;
    handle.title = "Drag to reorder";
    handle.addEventListener("pointerdown", (event) => startDrag(event, row));
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = item.displayTitle;
    if (item.artist) {
      const sub = document.createElement("span");
      sub.className = "sub";
      sub.textContent = " — " + item.artist;
      name.append(sub);
    }
    name.title = "Play";
    name.addEventListener("click", () => api("POST", "/api/transport/play", { id: item.id }));
    const duration = document.createElement("span");
    duration.className = "sub";
    duration.textContent = item.duration ? clock(item.duration) : "";
    const remove = document.createElement("button");
    remove.className = "small remove";
    remove.textContent = "✕";
    remove.title = "Remove";
    remove.setAttribute("aria-label", "Remove " + item.displayTitle);
    remove.addEventListener("click", () => api("DELETE", "/api/playlist/items/" + item.id));
    row.append(handle, name, duration, remove);
    list.append(row);
  });
}

// Dragging by the handle with pointer events, so that it works with a mouse and a finger alike.
// The listeners sit on the window: moving the row in the list loses any pointer capture on it.
function startDrag(event, row) {
  event.preventDefault();
  const list = $("playlist");
  const from = [...list.children].indexOf(row);
  dragging = true;
  row.classList.add("dragging");
  const move = (moveEvent) => {
    const rows = [...list.children].filter((other) => other !== row);
    const after = rows.find((other) => {
      const box = other.getBoundingClientRect();
      return moveEvent.clientY < box.top + box.height / 2;
    });
    if (after) list.insertBefore(row, after); else list.append(row);
  };
  const end = () => {
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", end);
    window.removeEventListener("pointercancel", end);
    row.classList.remove("dragging");
    dragging = false;
    const to = [...list.children].indexOf(row);
    const moved = to !== from && to >= 0;
    if (moved) api("POST", "/api/playlist/items/" + row.dataset.id + "/move", { index: to }).catch(renderPlaylist);
    // The server's playlist event redraws after a move; anything that came during the drag, now.
    if (redrawAfterDrag || !moved) { redrawAfterDrag = false; renderPlaylist(); }
  };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", end);
  window.addEventListener("pointercancel", end);
}

async function loadRoutes() {
  const routes = await api("GET", "/api/routes");
  const select = $("route");
  select.replaceChildren(...routes.routes.map((route) => {
    const option = document.createElement("option");
    option.value = route.id;
    option.textContent = route.description;
    option.selected = route.isCurrent;
    return option;
  }));
}

let searchTimer = null;
async function loadLibrary() {
  const search = $("search").value.trim();
  const page = await api("GET", "/api/library?limit=200" + (search ? "&search=" + encodeURIComponent(search) : ""));
  $("tracks").replaceChildren(...page.tracks.map((track) => {
    const row = document.createElement("li");
    row.dataset.trackId = track.id;
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = track.title || track.path.split("/").pop();
    if (track.artist) {
      const sub = document.createElement("span");
      sub.className = "sub";
      sub.textContent = " — " + track.artist;
      name.append(sub);
    }
    const add = document.createElement("button");
    add.className = "small add";
    add.textContent = "+";
    add.title = "Add to the playlist";
    add.setAttribute("aria-label", "Add " + name.textContent);
    add.addEventListener("click", () => api("POST", "/api/playlist/items", { items: [{ libraryId: track.id }] }));
    row.append(name, add);
    return row;
  }));
}

function connect() {
  const events = new EventSource("/api/events");
  const on = (name, handler) => events.addEventListener(name, (event) => handler(JSON.parse(event.data)));
  on("state", (data) => {
    Object.assign(state, { offset: 0, currentId: null, currentIndex: null }, data);
    renderPlaylist(); renderNowPlaying(); renderVolume();
  });
  on("currentItem", (data) => {
    state.currentId = data.id || null;
    state.currentIndex = data.index ?? null;
    if (!data.id) state.offset = 0;
    renderPlaylist(); renderNowPlaying();
  });
  on("offset", (data) => { state.offset = data.offset; renderOffset(); });
  on("playbackState", (data) => { state.playbackState = data.playbackState; renderNowPlaying(); });
  on("playlist", (data) => { state.playlist = data.items; renderPlaylist(); renderNowPlaying(); });
  on("volume", (data) => { state.volume = data.volume; state.isMuted = data.isMuted; renderVolume(); });
  on("route", () => loadRoutes());
  on("routes", () => loadRoutes());
  on("library", () => loadLibrary());
  on("itemFailed", (data) => showMessage("Skipped: " + data.error));
  events.onerror = () => showMessage(events.readyState === EventSource.CLOSED ? "Disconnected" : "Reconnecting…");
  events.onopen = () => showMessage("");
}

$("play-pause").addEventListener("click", () => api("POST", state.playbackState === "playing" ? "/api/transport/pause" : "/api/transport/play"));
$("next").addEventListener("click", () => api("POST", "/api/transport/next"));
$("previous").addEventListener("click", () => api("POST", "/api/transport/previous"));
$("mute").addEventListener("click", () => api("PUT", "/api/volume", { isMuted: !state.isMuted }));
$("volume").addEventListener("change", () => api("PUT", "/api/volume", { volume: Number($("volume").value) }));
$("progress").addEventListener("input", () => { seeking = true; $("elapsed").textContent = clock(Number($("progress").value)); });
$("progress").addEventListener("change", async () => {
  try { await api("POST", "/api/transport/seek", { offset: Number($("progress").value) }); } finally { seeking = false; }
});
$("route").addEventListener("change", () => api("PUT", "/api/route", { route: $("route").value }).catch(loadRoutes));
$("clear").addEventListener("click", () => api("DELETE", "/api/playlist"));
$("add-url").addEventListener("submit", (event) => {
  event.preventDefault();
  const url = $("url").value.trim();
  if (url) api("POST", "/api/playlist/items", { items: [{ url }] }).then(() => { $("url").value = ""; });
});
$("search").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(loadLibrary, 200); });

$("previous").innerHTML = ICONS.previous;
$("next").innerHTML = ICONS.next;
renderNowPlaying();
renderVolume();
connect();
loadRoutes();
loadLibrary();
