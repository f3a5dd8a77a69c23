import FacewireHTTP
import Hummingbird
import NIOCore

/// The page's files, embedded in the binary (no build step, no CDN, no framework). Served `no-cache` with a strong
/// `ETag`, so a browser revalidates each load and gets `304 Not Modified` while the binary is the same.
public struct PageAsset: Sendable {
    public let path: String
    public let contentType: String
    public let body: String
    public let etag: String

    init(_ path: String, _ contentType: String, _ body: String) {
        self.path = path
        self.contentType = contentType
        self.body = body
        // FNV-1a 64 of the content: stable across runs and builds of the same text.
        let hash = body.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        etag = "\"\(String(hash, radix: 16))\""
    }

    func response(ifNoneMatch: String?) -> Response {
        var headers: HTTPFields = [
            .contentType: contentType, .cacheControl: "no-cache", .eTag: etag,
            .named("X-Content-Type-Options"): "nosniff",
        ]
        if contentType.hasPrefix("text/html") {
            headers[.named("Content-Security-Policy")] =
                "default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
            headers[.named("Referrer-Policy")] = "no-referrer"
        }
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

public enum PageAssets {
    public static let all: [PageAsset] = [
        PageAsset("/", "text/html; charset=utf-8", indexHTML),
        PageAsset("/app.js", "text/javascript; charset=utf-8", appJS),
        PageAsset("/style.css", "text/css; charset=utf-8", styleCSS),
    ]

    static let indexHTML = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Facewire · live view</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/style.css">
        </head>
        <body>
        <header>
          <h1>Facewire</h1>
          <span id="connection" class="down" role="status">connecting…</span>
        </header>
        <main>
          <section id="tiles" aria-label="Streams"><p id="empty">Waiting for a stream…</p></section>
          <aside aria-label="Events">
            <h2>Events</h2>
            <ol id="events"></ol>
          </aside>
        </main>
        <script src="/app.js"></script>
        </body>
        </html>

        """#

    static let styleCSS = #"""
        :root { color-scheme: dark; --bg: #111418; --panel: #1b2027; --text: #e6e9ee; --muted: #8d96a3; --drop: #ff3b30; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--text); }
        header { display: flex; align-items: center; gap: 1em; padding: .5em 1em; background: var(--panel); }
        h1 { font-size: 1.1em; margin: 0; }
        h2 { font-size: 1em; margin: 0 0 .4em; }
        #connection { font-size: .85em; padding: .1em .6em; border-radius: 1em; background: #2f6f3e; }
        #connection.down { background: #7a2a26; }
        main { display: grid; grid-template-columns: minmax(0, 1fr) 20em; gap: 1em; padding: 1em; }
        #tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 24em), 1fr)); gap: 1em; align-content: start; }
        .tile { background: var(--panel); border-radius: .5em; padding: .6em; }
        .frame { position: relative; }
        .frame canvas { display: block; width: 100%; height: auto; background: #000; border-radius: .3em; }
        .dropmark { position: absolute; left: 0; right: 0; bottom: 0; height: .35em; background: var(--drop); opacity: 0; transition: opacity .6s; }
        .dropmark.on { opacity: 1; transition: none; }
        .stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(7.5em, 1fr)); gap: .1em .8em; margin: .5em 0 0; font-size: .85em; }
        .stats div { display: flex; justify-content: space-between; gap: .4em; }
        .stats dt { color: var(--muted); }
        .stats dd { margin: 0; font-variant-numeric: tabular-nums; }
        .stats .drops dd { color: var(--drop); }
        .ids { font-size: .85em; color: var(--muted); min-height: 1.4em; }
        .ended h2::after { content: " · ended"; color: var(--muted); }
        aside { background: var(--panel); border-radius: .5em; padding: .6em; max-height: calc(100vh - 5em); overflow: auto; }
        #events { list-style: none; margin: 0; padding: 0; }
        #events li { display: flex; gap: .5em; align-items: center; padding: .3em 0; border-bottom: 1px solid #2a313a; font-size: .85em; }
        #events img { width: 3em; height: 3em; object-fit: cover; border-radius: .3em; background: #000; flex: none; }
        #events .left { color: var(--muted); }
        @media (max-width: 48em) {
          main { grid-template-columns: 1fr; padding: .5em; }
          aside { max-height: none; }
        }

        """#

    static let appJS = #"""
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
          if (f.hasSmile) marks.push("smile");
          if (f.leftEyeClosed && f.rightEyeClosed) marks.push("eyes closed");
          else if (f.leftEyeClosed || f.rightEyeClosed) marks.push("wink");
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
          for (const [p, closed] of [[f.leftEye, f.leftEyeClosed], [f.rightEye, f.rightEyeClosed]]) {
            if (!p) continue;
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
          if (ev.hasPicture) img.src = src; else setTimeout(() => { img.src = src; }, 1500);
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

        """#
}

extension HTTPFields.Element.Name {
    /// A header name this module spells out (a constant, so the force-unwrap cannot fail at run time).
    static func named(_ name: String) -> Self { Self(name)! }
}
