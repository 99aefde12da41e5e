// cairn's graph: the pages the server laid out, drawn on a canvas. Drag to
// move, wheel (or pinch) to zoom, click a page to open it; filter by type
// and folder; pages an agent writes now pulse.
"use strict";
(function () {
  const canvas = document.getElementById("graph");
  if (!canvas) return;
  const ctx = canvas.getContext("2d");
  const tip = document.getElementById("graph-tip");
  const info = document.getElementById("graph-info");
  const typeSel = document.getElementById("g-type");
  const folderSel = document.getElementById("g-folder");
  const find = document.getElementById("g-find");

  let nodes = [], edges = [], byPath = new Map();
  let view = { x: 0, y: 0, k: 1 }; // screen = (world - x) * k + centre
  let shown = []; // whether each node passes the filters
  let hit = -1, found = -1;
  const pulses = new Map(); // node index -> start time

  // A colour of its own for each type, the same on every load.
  const colour = (type) => {
    if (!type) return "#8a9099";
    let h = 0;
    for (const c of type) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return "hsl(" + (h % 360) + ", 55%, 45%)";
  };

  const size = () => {
    const r = canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  };
  const toScreen = (n) => [(n.x - view.x) * view.k + canvas.clientWidth / 2, (n.v - view.y) * view.k + canvas.clientHeight / 2];
  const toWorld = (sx, sy) => [(sx - canvas.clientWidth / 2) / view.k + view.x, (sy - canvas.clientHeight / 2) / view.k + view.y];

  const fit = () => {
    if (!nodes.length) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of nodes) {
      x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.v); x1 = Math.max(x1, n.x); y1 = Math.max(y1, n.v);
    }
    view.x = (x0 + x1) / 2; view.y = (y0 + y1) / 2;
    view.k = Math.min(canvas.clientWidth / (x1 - x0 + 60), canvas.clientHeight / (y1 - y0 + 60), 4);
  };

  let queued = false;
  const draw = () => {
    queued = false;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    ctx.clearRect(0, 0, w, h);
    // Edges, in one path.
    ctx.beginPath();
    for (const [a, b] of edges) {
      if (!shown[a] || !shown[b]) continue;
      const [ax, ay] = toScreen(nodes[a]), [bx, by] = toScreen(nodes[b]);
      if ((ax < 0 && bx < 0) || (ay < 0 && by < 0) || (ax > w && bx > w) || (ay > h && by > h)) continue;
      ctx.moveTo(ax, ay); ctx.lineTo(bx, by);
    }
    ctx.strokeStyle = "rgba(90, 100, 110, 0.18)";
    ctx.lineWidth = 1;
    ctx.stroke();
    // Nodes, one path per colour.
    const paths = new Map();
    nodes.forEach((n, i) => {
      if (!shown[i]) return;
      const [x, y] = toScreen(n);
      const r = Math.max(1.5, n.r * Math.sqrt(view.k));
      if (x < -r || y < -r || x > w + r || y > h + r) return;
      const c = colour(n.y);
      let p = paths.get(c);
      if (!p) { p = new Path2D(); paths.set(c, p); }
      p.moveTo(x + r, y); p.arc(x, y, r, 0, 2 * Math.PI);
    });
    for (const [c, p] of paths) { ctx.fillStyle = c; ctx.fill(p); }
    // Labels of the large enough, the found and the hovered.
    ctx.fillStyle = "#1d1f21";
    ctx.font = "12px system-ui, sans-serif";
    nodes.forEach((n, i) => {
      if (!shown[i] || (n.r * view.k < 9 && i !== hit && i !== found)) return;
      const [x, y] = toScreen(n);
      if (x < 0 || y < 0 || x > w || y > h) return;
      ctx.fillText(n.t, x + n.r * Math.sqrt(view.k) + 3, y + 4);
    });
    for (const i of [hit, found]) {
      if (i < 0) continue;
      const [x, y] = toScreen(nodes[i]);
      ctx.beginPath(); ctx.arc(x, y, nodes[i].r * Math.sqrt(view.k) + 4, 0, 2 * Math.PI);
      ctx.strokeStyle = "#f0a500"; ctx.lineWidth = 2; ctx.stroke();
    }
    // Pulses of the pages an agent writes.
    const now = performance.now();
    for (const [i, t0] of pulses) {
      const age = (now - t0) / 1500;
      if (age > 1) { pulses.delete(i); continue; }
      const [x, y] = toScreen(nodes[i]);
      ctx.beginPath(); ctx.arc(x, y, nodes[i].r * Math.sqrt(view.k) + 4 + age * 24, 0, 2 * Math.PI);
      ctx.strokeStyle = "rgba(240, 165, 0, " + (1 - age) + ")"; ctx.lineWidth = 3; ctx.stroke();
    }
    if (pulses.size) redraw();
  };
  const redraw = () => { if (!queued) { queued = true; requestAnimationFrame(draw); } };

  const filter = () => {
    const t = typeSel.value, f = folderSel.value;
    shown = nodes.map((n) => (!t || n.y === t) && (!f || n.f === f));
    let count = 0;
    for (const s of shown) if (s) count++;
    info.textContent = count + " / " + nodes.length + " " + (canvas.dataset.pages || "pages") + ", " + edges.length + " " + (canvas.dataset.links || "links") + (cut ? " (…)" : "") + ".";
    redraw();
  };
  let cut = false;

  const nearest = (sx, sy) => {
    let best = -1, bestD = Infinity;
    nodes.forEach((n, i) => {
      if (!shown[i]) return;
      const [x, y] = toScreen(n);
      const d = (x - sx) ** 2 + (y - sy) ** 2;
      const r = Math.max(6, n.r * Math.sqrt(view.k) + 3);
      if (d < r * r && d < bestD) { best = i; bestD = d; }
    });
    return best;
  };
  const open = (i) => { window.location.href = "/pages/" + nodes[i].p.split("/").map(encodeURIComponent).join("/"); };

  // Moving, zooming, pointing.
  let drag = null, moved = false;
  canvas.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y }; moved = false;
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener("pointermove", (e) => {
    const r = canvas.getBoundingClientRect();
    if (drag) {
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
      view.x = drag.vx - dx / view.k; view.y = drag.vy - dy / view.k;
      redraw();
      return;
    }
    const i = nearest(e.clientX - r.left, e.clientY - r.top);
    if (i !== hit) {
      hit = i;
      tip.hidden = i < 0;
      if (i >= 0) {
        tip.textContent = nodes[i].t + " — " + nodes[i].p;
        tip.style.left = e.clientX - r.left + 12 + "px";
        tip.style.top = e.clientY - r.top + 12 + "px";
      }
      redraw();
    }
  });
  canvas.addEventListener("pointerup", (e) => {
    canvas.releasePointerCapture(e.pointerId);
    const wasDrag = drag && moved;
    drag = null;
    if (wasDrag) return;
    const r = canvas.getBoundingClientRect();
    const i = nearest(e.clientX - r.left, e.clientY - r.top);
    if (i >= 0) open(i);
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    const sx = e.clientX - r.left, sy = e.clientY - r.top;
    const [wx, wy] = toWorld(sx, sy);
    view.k = Math.min(Math.max(view.k * Math.exp(-e.deltaY * 0.0015), 0.01), 20);
    const [nx, ny] = toWorld(sx, sy);
    view.x += wx - nx; view.y += wy - ny;
    redraw();
  }, { passive: false });
  canvas.addEventListener("keydown", (e) => {
    const step = 60 / view.k;
    const keys = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (keys[e.key]) { view.x += keys[e.key][0]; view.y += keys[e.key][1]; }
    else if (e.key === "+" || e.key === "=") view.k *= 1.25;
    else if (e.key === "-") view.k /= 1.25;
    else if (e.key === "Enter" && found >= 0) open(found);
    else return;
    e.preventDefault();
    redraw();
  });
  window.addEventListener("resize", () => { size(); redraw(); });
  typeSel.addEventListener("change", filter);
  folderSel.addEventListener("change", filter);
  find.addEventListener("input", () => {
    const q = find.value.trim().toLowerCase();
    found = q ? nodes.findIndex((n) => n.t.toLowerCase().includes(q) || n.p.toLowerCase().includes(q)) : -1;
    if (found >= 0) { view.x = nodes[found].x; view.y = nodes[found].v; view.k = Math.max(view.k, 1.5); }
    canvas.dataset.found = found >= 0 ? nodes[found].p : "";
    redraw();
  });
  find.addEventListener("keydown", (e) => { if (e.key === "Enter" && found >= 0) { e.preventDefault(); open(found); } });

  const options = (sel, values) => {
    for (const v of [...values].sort()) {
      const o = document.createElement("option");
      o.value = v; o.textContent = v || "(top level)";
      sel.append(o);
    }
  };

  fetch(canvas.dataset.src, { credentials: "same-origin" })
    .then((r) => (r.ok ? r.json() : Promise.reject(r.status)))
    .then((g) => {
      nodes = g.nodes; edges = g.edges; cut = !!g.cut;
      nodes.forEach((n, i) => byPath.set(n.p, i));
      options(typeSel, new Set(nodes.map((n) => n.y || "").filter((t) => t)));
      options(folderSel, new Set(nodes.map((n) => n.f)));
      if (g.focus && byPath.has(g.focus)) found = byPath.get(g.focus);
      size(); fit(); filter(); draw();
      canvas.dataset.ready = String(nodes.length);
    })
    .catch((status) => { info.textContent = "The graph could not be loaded (" + status + ")."; });

  if (window.EventSource) {
    const es = new EventSource("/graph/activity");
    es.addEventListener("file", (e) => {
      const i = byPath.get(JSON.parse(e.data));
      if (i !== undefined) { pulses.set(i, performance.now()); redraw(); }
    });
  }
})();
