// cairn's web interface: search as one types, files dropped on the
// upload form, a job's activity as it happens. Everything else works
// without script.
"use strict";

// Search as one types.
(function () {
  const form = document.querySelector("form[data-live]");
  if (!form) return;
  const results = () => document.getElementById("results");
  let timer = 0;
  let seq = 0;
  const run = () => {
    const params = new URLSearchParams(new FormData(form));
    const mine = ++seq;
    fetch(form.dataset.live + "?" + params.toString(), { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
      .then((html) => {
        if (mine !== seq) return; // a later query answered first
        const doc = new DOMParser().parseFromString(html, "text/html");
        const fresh = doc.getElementById("results");
        if (fresh && results()) results().replaceWith(document.adoptNode(fresh));
        history.replaceState(null, "", "/search?" + params.toString());
      })
      .catch(() => {});
  };
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, 150);
  });
})();

// Files dropped on the upload form are the ones it sends.
(function () {
  const form = document.querySelector("form[data-drop]");
  if (!form) return;
  const input = form.querySelector("input[type=file]");
  const over = (on) => (e) => {
    e.preventDefault();
    form.classList.toggle("over", on);
  };
  form.addEventListener("dragover", over(true));
  form.addEventListener("dragleave", over(false));
  form.addEventListener("drop", (e) => {
    over(false)(e);
    if (e.dataTransfer && e.dataTransfer.files.length) input.files = e.dataTransfer.files;
  });
})();

// A job's activity as it happens.
(function () {
  const list = document.querySelector("ol[data-stream]");
  if (!list || !window.EventSource) return;
  const es = new EventSource(list.dataset.stream);
  es.addEventListener("line", (e) => {
    const l = JSON.parse(e.data);
    const li = document.createElement("li");
    li.className = "ev-" + l.kind;
    const t = document.createElement("time");
    t.textContent = l.time;
    li.append(t, " " + l.text);
    list.append(li);
  });
  es.addEventListener("done", (e) => {
    es.close();
    const state = document.getElementById("job-state");
    if (state) state.textContent = JSON.parse(e.data);
    if (state) state.dataset.final = "1";
    const live = document.getElementById("live");
    if (live) live.textContent = list.dataset.finished || "Finished.";
  });
})();
