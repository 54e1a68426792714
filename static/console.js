// Every htmx request carries the CSRF token from the page's meta tag.
document.addEventListener("htmx:configRequest", function (event) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) { event.detail.headers["X-CSRFToken"] = meta.content; }
});

// htmx does not swap error answers: say so, instead of leaving the row silently unchanged. The words come
// from the page (body data-error-*), in its language.
document.addEventListener("htmx:responseError", function (event) {
  var status = event.detail.xhr.status;
  var words = document.body.dataset;
  var text = status === 403 ? words.error403 :
             status === 404 ? words.error404 :
             status === 409 ? words.error409 :
             (words.errorOther || "").replace("%s", status);
  var main = document.querySelector("main");
  if (!main) { return; }
  var note = document.createElement("p");
  note.className = "flash error";
  note.setAttribute("role", "alert");
  note.textContent = text;
  main.insertBefore(note, main.firstChild);
});

// Copy buttons (data-copy="#selector"): shown only where the clipboard can be written, say when it worked.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    if (!navigator.clipboard) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.querySelector(button.getAttribute("data-copy"));
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = button.getAttribute("data-copied") || "Copied";
      });
    });
  });
});

// On a phone the navigation folds behind a Menu button (without JavaScript it simply wraps).
document.addEventListener("DOMContentLoaded", function () {
  var bar = document.querySelector(".topbar");
  var button = document.querySelector(".menu-button");
  if (!bar || !button) { return; }
  bar.classList.add("foldable");
  button.hidden = false;
  button.addEventListener("click", function () {
    var open = bar.classList.toggle("open");
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });
});

// "Select all on this page" in the review queue (without JavaScript each row is ticked on its own).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input.select-all").forEach(function (all) {
    all.hidden = false;
    all.addEventListener("change", function () {
      document.querySelectorAll('input[name="ids"][form="bulk-form"]').forEach(function (box) {
        box.checked = all.checked;
      });
    });
  });
});
