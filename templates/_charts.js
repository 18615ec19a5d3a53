// Draw each chart live from its JSON spec; the static SVG stays until the live one is drawn.
document.querySelectorAll(".chart .live").forEach(function (el) {
  var spec = JSON.parse(document.getElementById(el.dataset.spec).textContent);
  var figure = el.parentElement;
  vegaEmbed(el, spec, {renderer: "svg", actions: false, ast: true}).then(function () {
    figure.classList.add("live-ok");
  });
});
