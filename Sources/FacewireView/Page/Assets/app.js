"use strict";
// Facewire live view. Frames arrive joined with their own result: [u32 JSON length][JSON][JPEG].
// A frame is drawn only when its seq (from the capture node) equals its result's seq (from the collector).
const tiles = new Map();
const view = { frames: 0, mismatches: 0, drawn: [], events: 0, connections: 0 };
window.facewire = view;
const palette = ["#4cc9f0", "#f72585", "#b5e48c", "#ffd166", "#c77dff", "#06d6a0", "#ff9f1c", "#a0c4ff", "#ff70a6", "#70d6ff"];
const colour = (id) => (id ? palette[id % palette.length] : "#cccccc");
const $ = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };

if (new URLSearchParams(location.search).has("token")) {
  history.replaceState(null, "", location.pathname);  // the cookie carries it from now on
}

function tile(stream) {
  let t = tiles.get(stream);
  if (t) return t;
  document.getElementById("empty")?.remove();
  const el = $("article", "tile");
  el.dataset.stream = stream;
  el.append($("h2", null, stream));
  const frame = $("div", "frame");
  const canvas = $("canvas");
  canvas.width = 640; canvas.height = 360;
  const mark = $("div", "dropmark");
  frame.append(canvas, mark);
  const stats = $("dl", "stats");
  const ids = $("div", "ids");
  el.append(frame, ids, stats);
  const box = document.getElementById("tiles");
  const after = [...box.children].find((c) => c.dataset.stream > stream);
  box.insertBefore(el, after || null);
  t = { el, canvas, ctx: canvas.getContext("2d"), mark, stats, ids, busy: false, next: null, lastDrop: null };
  tiles.set(stream, t);
  return t;
}

function receiveFrame(buffer) {
  const data = new DataView(buffer);
  const length = data.getUint32(0);
  const meta = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  const jpeg = new Blob([new Uint8Array(buffer, 4 + length)], { type: "image/jpeg" });
  const t = tile(meta.stream);
  t.next = { meta, jpeg };  // newest wins: a frame still waiting is replaced
  if (!t.busy) drawNext(t);
}

async function decode(jpeg) {
  try { return await createImageBitmap(jpeg, { imageOrientation: "none" }); } catch (e) { return createImageBitmap(jpeg); }
}

async function drawNext(t) {
  t.busy = true;
  while (t.next) {
    const { meta, jpeg } = t.next;
    t.next = null;
    let bitmap;
    try { bitmap = await decode(jpeg); } catch (e) { continue; }
    draw(t, meta, bitmap);
    bitmap.close();
  }
  t.busy = false;
}

function draw(t, meta, bitmap) {
  if (meta.frameSeq !== meta.resultSeq) { view.mismatches++; return; }
  const { canvas, ctx } = t;
  if (canvas.width !== meta.width || canvas.height !== meta.height) { canvas.width = meta.width; canvas.height = meta.height; }
  ctx.drawImage(bitmap, 0, 0, meta.width, meta.height);
  const s = Math.max(1.5, Math.max(meta.width, meta.height) / 400);
  ctx.lineWidth = 2 * s;
  ctx.font = `bold ${Math.round(12 * s)}px system-ui, sans-serif`;
  ctx.textBaseline = "top";
  for (const f of meta.faces) drawFace(ctx, f, s);
  const ids = meta.faces.map((f) => f.id).filter((id) => id);
  Object.assign(t.el.dataset, {
    epoch: meta.epoch, frameSeq: meta.frameSeq, resultSeq: meta.resultSeq, faces: meta.faces.length, trackingIds: ids.join(" "),
  });
  t.ids.textContent = meta.faces.length ? meta.faces.map(label).join("  ") : "no face";
  view.frames++;
  view.drawn.push({ stream: meta.stream, epoch: meta.epoch, frameSeq: meta.frameSeq, resultSeq: meta.resultSeq,
                    faces: meta.faces.map((f) => ({ id: f.id, x: f.x, y: f.y, w: f.w, h: f.h })) });
  if (view.drawn.length > 1000) view.drawn.shift();
}

function label(f) {
  const marks = [];
  const withheld = f.withheld || [];
  if (f.hasSmile) marks.push("smile");
  if (f.leftEyeClosed && f.rightEyeClosed) marks.push("eyes closed");
  else if (f.leftEyeClosed || f.rightEyeClosed) marks.push("wink");
  // A face that cannot tell (too dark to see its eyes) says so instead of guessing (SPEC 11.7).
  for (const what of withheld) marks.push(`${what} ?`);
  for (const expression of f.expressions || []) marks.push(expression.replaceAll("-", " "));
  const heart = typeof f.bpm === "number" ? ` ♥ ${f.bpm}` : "";
  return (f.id ? `#${f.id}` : "face") + heart + (marks.length ? ` (${marks.join(", ")})` : "");
}

function drawFace(ctx, f, s) {
  const c = colour(f.id);
  ctx.strokeStyle = c;
  ctx.save();
  // The box turns with the face's roll about its centre, as the original app drew it.
  ctx.translate(f.x + f.w / 2, f.y + f.h / 2);
  if (typeof f.roll === "number") ctx.rotate((f.roll * Math.PI) / 180);
  ctx.strokeRect(-f.w / 2, -f.h / 2, f.w, f.h);
  ctx.restore();
  const unseen = (f.withheld || []).includes("eyes");
  for (const [p, closed] of [[f.leftEye, f.leftEyeClosed], [f.rightEye, f.rightEyeClosed]]) {
    if (!p) continue;
    if (unseen) { ctx.fillStyle = ctx.strokeStyle; ctx.font = `${Math.round(10 * s)}px sans-serif`; ctx.fillText("?", p.x - 3 * s, p.y + 4 * s); continue; }
    ctx.beginPath();
    if (closed) { ctx.moveTo(p.x - 4 * s, p.y); ctx.lineTo(p.x + 4 * s, p.y); } else { ctx.arc(p.x, p.y, 3 * s, 0, 2 * Math.PI); }
    ctx.stroke();
  }
  if (f.mouth) {
    ctx.beginPath();
    if (f.hasSmile) ctx.arc(f.mouth.x, f.mouth.y - 3 * s, 6 * s, 0.15 * Math.PI, 0.85 * Math.PI);
    else { ctx.moveTo(f.mouth.x - 6 * s, f.mouth.y); ctx.lineTo(f.mouth.x + 6 * s, f.mouth.y); }
    ctx.stroke();
  }
  const text = label(f) + (typeof f.roll === "number" ? ` ${Math.round(f.roll)}°` : "");
  const width = ctx.measureText(text).width + 6 * s;
  const height = 16 * s;
  const y = f.y - height >= 0 ? f.y - height : f.y + f.h;
  ctx.fillStyle = c;
  ctx.fillRect(f.x, y, width, height);
  ctx.fillStyle = "#000";
  ctx.fillText(text, f.x + 3 * s, y + 2 * s);
}

const fmt = (v, d = 0) => (typeof v === "number" ? v.toFixed(d) : "–");

function receiveStatus(st) {
  const t = tile(st.stream);
  t.el.classList.toggle("ended", st.ended);
  const w = st.window || {};
  const dropped = Object.values(st.dropped).reduce((a, b) => a + b, 0);
  const rows = [
    ["fps", fmt(w.fps, 1)], ["processed", st.processed], ["dropped", dropped],
    ["p50", w.latencyP50Ms !== undefined ? `${fmt(w.latencyP50Ms)} ms` : "–"],
    ["p99", w.latencyP99Ms !== undefined ? `${fmt(w.latencyP99Ms)} ms` : "–"], ["tracks", st.liveTracks],
    ...Object.entries(st.dropped).sort().map(([reason, n]) => [reason, n]),
  ];
  t.stats.replaceChildren(...rows.map(([k, v], i) => {
    const row = $("div", i >= 6 ? "drops" : null);
    row.append($("dt", null, k), $("dd", null, String(v)));
    return row;
  }));
  Object.assign(t.el.dataset, { processed: st.processed, dropped, frames: st.frames });
  const last = st.lastDrop ? `${st.lastDrop.seq}` : null;
  if (last !== null && last !== t.lastDrop) {
    t.lastDrop = last;
    t.mark.title = `dropped: ${st.lastDrop.reason} (seq ${st.lastDrop.seq})`;
    t.mark.classList.add("on");
    setTimeout(() => t.mark.classList.remove("on"), 150);
  }
}

function receiveEvent(ev) {
  view.events++;
  const li = $("li", ev.kind);
  Object.assign(li.dataset, { kind: ev.kind, stream: ev.stream, trackingId: ev.trackingID, seq: ev.seq });
  const img = $("img");
  img.alt = `track ${ev.trackingID}`;
  img.onerror = () => { img.style.visibility = "hidden"; };
  const src = `/streams/${encodeURIComponent(ev.stream)}/tracks/${ev.trackingID}.jpg?epoch=${ev.epoch}&t=${ev.atMs}`;
  // A picture not made yet is asked about first (a failed image request would be an error in the console).
  if (ev.hasPicture) img.src = src;
  else setTimeout(() => {
    fetch(src.replace(".jpg?", ".json?"), { cache: "no-store" }).then((r) => r.ok ? r.json() : null)
      .then((answer) => { if (answer && answer.picture) img.src = src; else img.style.visibility = "hidden"; })
      .catch(() => { img.style.visibility = "hidden"; });
  }, 1500);
  const text = ev.kind === "left"
    ? `${ev.stream} #${ev.trackingID} left after ${(ev.durationMs / 1000).toFixed(1)} s, ${ev.frames} frames`
      + (typeof ev.bpm === "number" ? `, ♥ ${ev.bpm}` : "")
    : `${ev.stream} #${ev.trackingID} appeared (seq ${ev.seq})`;
  li.append(img, $("span", null, text));
  const list = document.getElementById("events");
  list.prepend(li);
  while (list.children.length > 100) list.lastChild.remove();
}

function receiveState(state) {
  for (const st of state.streams) receiveStatus(st);
  document.getElementById("events").replaceChildren();
  for (const ev of state.events) receiveEvent(ev);
}

function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.binaryType = "arraybuffer";
  const badge = document.getElementById("connection");
  ws.onopen = () => { view.connections++; badge.textContent = "live"; badge.classList.remove("down"); };
  ws.onclose = () => { badge.textContent = "reconnecting…"; badge.classList.add("down"); setTimeout(connect, 1000); };
  ws.onmessage = (m) => {
    if (typeof m.data !== "string") { receiveFrame(m.data); return; }
    const message = JSON.parse(m.data);
    if (message.type === "status") receiveStatus(message);
    else if (message.type === "event") receiveEvent(message);
    else if (message.type === "state") receiveState(message);
  };
}
connect();
