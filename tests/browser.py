"""Helpers of the browser tests: start headless Chromium, block its network, audit report HTML.

Chromium runs with a fresh profile and without background networking, so a run of the tests
makes no request of its own; every request the performance log then shows comes from the page.
"""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import two_run_view

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
REQUIRE_ENV = "RAGREPORT_REQUIRE_BROWSER"
ARTIFACTS_ENV = "RAGREPORT_ARTIFACTS"

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


# --- finding the browser ------------------------------------------------------------------------


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not _executable(p)]
    if missing:
        return f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the Python package selenium is not installed (pip install selenium)"
    return None


def require_browser() -> None:
    """Skip when the browser is missing, unless RAGREPORT_REQUIRE_BROWSER=1: then fail."""
    reason = browser_missing()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"browser tests required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"browser tests need Chromium: {reason}")


def start_chromium(profile: Path, *, javascript: bool = True) -> Any:
    """A headless Chromium driven by chromedriver, with a new empty profile at ``profile``.

    Browser console and performance (network) logs are recorded; with ``javascript=False``
    scripts are blocked the way a locked-down mail client or browser policy blocks them.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile.mkdir(parents=True, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1280,1000")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    return driver


def block_network(driver: Any) -> None:
    """Put the browser offline through the DevTools protocol (no request leaves the machine)."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
    )


def open_clean(driver: Any, url: str) -> None:
    """Open ``url`` after draining the logs, so they hold only what this page does.

    Chromium's own start page loads chrome:// resources; going to about:blank first and
    reading the logs away keeps those out of what the tests inspect.
    """
    driver.get("about:blank")
    driver.get_log("performance")
    driver.get_log("browser")
    driver.get(url)


def widths(driver: Any, selector: str) -> tuple[int, int, list[list[Any]]]:
    """The open page's width, the width it scrolls to, and each element matching ``selector``
    as [its class, its right edge, its scroll width, its client width]: an element with scroll
    width over client width scrolls inside, one whose right edge passes the page's runs past it."""
    width = driver.execute_script("return document.documentElement.clientWidth;")
    page = driver.execute_script("return document.documentElement.scrollWidth;")
    found = driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll(arguments[0]),"
        " function (e) { return [e.className, e.getBoundingClientRect().right,"
        " e.scrollWidth, e.clientWidth]; });",
        selector,
    )
    return width, page, found


def requested_urls(performance_log: list[dict[str, Any]]) -> list[str]:
    """Every URL of a Network.requestWillBeSent event in a chromedriver performance log."""
    urls = []
    for entry in performance_log:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def severe(browser_log: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in browser_log if e.get("level") == "SEVERE"]


def wait_for_live_charts(driver: Any, timeout: float = 20) -> None:
    """Wait until every .chart figure has class live-ok (its Vega view rendered)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    script = (
        "var f = document.querySelectorAll('.chart');"
        "return f.length > 0 && Array.prototype.every.call(f, function (x) {"
        " return x.classList.contains('live-ok'); });"
    )
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: d.execute_script(script))
    except TimeoutException:
        state = driver.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('.chart'),"
            " function (x) { return x.id + ': ' + x.className; });"
        )
        errors = severe(driver.get_log("browser"))
        raise AssertionError(
            f"charts not live after {timeout}s: {state}; console errors: {errors}"
        ) from None


def full_page_screenshot(driver: Any, path: Path, width: int = 1280) -> Path:
    """Resize the window to the page's whole height and save a PNG of it."""
    height = driver.execute_script(
        "return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight);"
    )
    driver.set_window_size(width, int(height) + 200)  # + room for the (headless) window frame
    inner = driver.execute_script("return window.innerHeight;")
    if inner < height:
        driver.set_window_size(width, int(height) + 200 + (height - inner))
    path.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(path)), f"could not save {path}"
    return path


def artifacts_dir(fallback: Path) -> Path:
    """Where screenshots go: $RAGREPORT_ARTIFACTS when set, else ``fallback``."""
    folder = Path(os.environ.get(ARTIFACTS_ENV) or fallback)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# --- rendering reports --------------------------------------------------------------------------


def render_report(run_a: Path, run_b: Path, out_dir: Path, *options: str) -> tuple[Path, dict]:
    """Run ``ragreport compare`` through click; return the HTML path and the parsed JSON."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    out_dir.mkdir(parents=True, exist_ok=True)
    html = out_dir / "report.html"
    args = ["compare", str(run_a), str(run_b), "-o", str(html), *options]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    document = json.loads(html.with_suffix(".json").read_text(encoding="utf-8"))
    return html, two_run_view(document) if len(document["comparisons"]) == 1 else document


# Strings that would run script, or show something else than themselves, were they pasted into
# HTML, an attribute, a URL, a JSON <script> block or a Jinja template without escaping.
PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '</script><img src=x onerror="window.__pwned=2">',
    '"><svg onload="window.__pwned=3">',
    "javascript:window.__pwned=4",
    "{{ 7*7 }}",
    "{% raw %}",
    "'-alert(1)-'",
    "<!--",
)


def hostile_runs(folder: Path, n: int = 20) -> tuple[Path, Path]:
    """Two small run logs whose ids, slices and texts are all payloads.

    Every third question changes outcome between A and B (fixed or broken), so hostile ids,
    slices and questions reach the changed-questions table and the charts' data; run A also has
    one question B lacks, so a hostile id reaches the warning about unmatched questions.
    """
    folder.mkdir(parents=True, exist_ok=True)

    def p(i: int) -> str:
        return PAYLOADS[i % len(PAYLOADS)]

    def rows(run: str) -> list[dict[str, Any]]:
        out = []
        for i in range(n):
            passages = [f"{p(i + j)}#doc{i}-{j}" for j in range(4)]
            relevant = passages[1:3]
            correct_a = i % 2 == 0
            flips = i % 3 == 0
            correct = correct_a if run == "a" or not flips else not correct_a
            retrieved = passages if run == "a" else [passages[1], passages[0], *passages[2:]]
            out.append(
                {
                    "question_id": f"{p(i)}#q{i}",
                    "question": f"Q{i} {p(i)} {p(i + 3)}",
                    "slice": p(i // 3),
                    "retrieved_ids": retrieved,
                    "relevant_ids": relevant,
                    "relevant_grades": [2, 1],
                    "context_ids": retrieved[:2],
                    "correct": correct,
                    "faithfulness": 0.25 + 0.5 * ((i * (3 if run == "a" else 5)) % 7) / 7,
                    "answer": f"{run.upper()} answer {p(i + 1)}",
                    "reference_answer": f"reference {p(i + 2)}",
                }
            )
        if run == "a":
            out.append({**out[0], "question_id": f"{PAYLOADS[0]}#only-a"})
        return out

    a, b = folder / "hostile_a.parquet", folder / "hostile_b.parquet"
    pd.DataFrame(rows("a")).to_parquet(a)
    pd.DataFrame(rows("b")).to_parquet(b)
    return a, b


# --- reading raw HTML ---------------------------------------------------------------------------


class HtmlAudit(HTMLParser):
    """One pass over report HTML collecting what the escaping checks look at."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # (tag, attribute, value) of every attribute of every element, <svg> children included
        self.attributes: list[tuple[str, str, str | None]] = []
        # text of every <script type="application/json"> block, ended where a browser ends it
        self.json_blocks: list[str] = []
        # text of every <style> element
        self.styles: list[str] = []
        self._in: str | None = None
        self._type = ""
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes.extend((tag, name, value) for name, value in attrs)
        if tag in ("script", "style"):
            self._in, self._buffer = tag, []
            self._type = (dict(attrs).get("type") or "").strip().lower()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes.extend((tag, name, value) for name, value in attrs)

    def handle_data(self, data: str) -> None:
        if self._in:
            self._buffer.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            text = "".join(self._buffer)
            if tag == "style":
                self.styles.append(text)
            elif self._type == "application/json":
                self.json_blocks.append(text)
            self._in = None


def audit(html: str) -> HtmlAudit:
    parser = HtmlAudit()
    parser.feed(html)
    parser.close()
    return parser
