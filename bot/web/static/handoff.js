// The page of one staff handoff (/console/handoffs/{id}) keeps itself current without a reload, which would
// throw away the reply being typed: every data-seconds it asks the server for the messages block (data-url,
// an HTML fragment rendered by the same template as the page) and swaps in #handoff-live when its
// data-version changed. The reply form is never touched, so what is typed and the focus stay. Once the
// handoff is closed (data-state="closed"), the form is locked and the notice in it shown, and polling stops.
// A failed request leaves the page as it is: a network error is retried at the next tick; 401/403/404 or a
// redirect (the session ended: the server answers with a 303 to the login page) stop polling. Without
// JavaScript the page works as before: a reload shows everything.
(function () {
  "use strict";
  var script = document.currentScript;
  var url = script.getAttribute("data-url");
  var seconds = parseInt(script.getAttribute("data-seconds"), 10);
  if (!url || !(seconds > 0)) {
    return;
  }
  var timer = null;
  var busy = false; // a request is on its way
  var stopped = false;

  function stop() {
    stopped = true;
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
  }

  function lockReply() {
    var section = document.getElementById("handoff-reply");
    if (!section) {
      return;
    }
    var notice = document.getElementById("reply-closed");
    if (notice) {
      notice.hidden = false;
    }
    var text = document.getElementById("reply-text");
    if (text) {
      text.readOnly = true; // still selectable: the typed text can be copied
      text.required = false;
    }
    var buttons = section.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].disabled = true;
    }
  }

  function apply(html) {
    var current = document.getElementById("handoff-live");
    var holder = document.createElement("template");
    holder.innerHTML = html; // rendered and escaped by the server, as the page itself
    var fresh = holder.content.getElementById("handoff-live");
    if (!current || !fresh) {
      return;
    }
    if (fresh.getAttribute("data-version") !== current.getAttribute("data-version")) {
      current.replaceWith(fresh);
    }
    if (fresh.getAttribute("data-state") === "closed") {
      lockReply();
      stop();
    }
  }

  function schedule() {
    if (!stopped) {
      timer = setTimeout(poll, seconds * 1000);
    }
  }

  function poll() {
    timer = null;
    if (document.hidden) {
      // a background tab asks nothing; it asks again as soon as it is shown
      return;
    }
    var current = document.getElementById("handoff-live");
    var shown = current ? current.getAttribute("data-conversation") || "" : "";
    var address = url + "?conversation=" + encodeURIComponent(shown);
    busy = true;
    fetch(address, { credentials: "same-origin", redirect: "manual", cache: "no-store" })
      .then(function (response) {
        if (response.type === "opaqueredirect" || response.status === 401 || response.status === 403 ||
            response.status === 404) {
          stop();
          return null;
        }
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html !== null && !stopped) {
          apply(html);
        }
      })
      .catch(function () {
        // network error: leave the page as it is and try again at the next tick
      })
      .then(function () {
        busy = false;
        schedule();
      });
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && !stopped && !busy && timer === null) {
      poll();
    }
  });
  schedule();
})();
