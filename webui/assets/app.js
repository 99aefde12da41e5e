// cairn's web interface: search as one types. Everything else works
// without script.
"use strict";
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
