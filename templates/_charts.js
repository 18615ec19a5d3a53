// Draw each chart live from its JSON spec; the static SVG stays until the live one is drawn.
document.querySelectorAll(".chart .live").forEach(function (el) {
  var spec = JSON.parse(document.getElementById(el.dataset.spec).textContent);
  var figure = el.parentElement;
  vegaEmbed(el, spec, {renderer: "svg", actions: false, ast: true}).then(function () {
    figure.classList.add("live-ok");
  });
});
// Printed (an archived copy), every folded section is open: what it holds is part of the report.
var foldedForPrint = [];
window.addEventListener("beforeprint", function () {
  foldedForPrint = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) {
    return !d.open;
  });
  foldedForPrint.forEach(function (d) { d.open = true; });
});
window.addEventListener("afterprint", function () {
  foldedForPrint.forEach(function (d) { d.open = false; });
});
