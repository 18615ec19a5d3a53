"""How heavy is the report page? Size of the HTML and its opening time in headless Chromium.

Usage: ``python bench/page_open.py [--size 10000] [--repeats 3]``

Renders the report of a generated log pair of --size questions (cached like run_bench.py's),
then opens it --repeats times in Debian's Chromium (selenium, a fresh profile each time, the
network cut), and prints the HTML size, the median time to the page's load event, and the
median time until every chart is drawn live. The target: at 10,000 paired questions the HTML
stays under 5 MB and opens in under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from browser import block_network, start_chromium  # noqa: E402  (the browser tests' helpers)
from run_bench import DEFAULT_CACHE, logs_for  # noqa: E402

TARGET_MB, TARGET_S = 5.0, 2.0


def open_page(html: Path, profile: Path) -> tuple[float, float]:
    """Seconds to the load event and until every chart is live (measured in the page)."""
    driver = start_chromium(profile)
    try:
        block_network(driver)
        driver.get(html.as_uri())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = driver.execute_script(
                "return document.querySelectorAll('.chart').length"
                " === document.querySelectorAll('.chart.live-ok').length"
            )
            if done:
                break
            time.sleep(0.02)
        charts_ms = driver.execute_script("return performance.now()")
        timing = driver.execute_script(
            "const t = performance.getEntriesByType('navigation')[0];"
            "return t.loadEventEnd - t.startTime;"
        )
        return timing / 1000, charts_ms / 1000
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    a, b, _ = logs_for(args.size, args.seed, DEFAULT_CACHE)
    with tempfile.TemporaryDirectory(prefix="ragreport-page-") as tmp:
        html = Path(tmp) / "report.html"
        subprocess.run(
            [sys.executable, "-m", "reportgen", "compare", str(a), str(b), "-o", str(html)],
            check=True,
            cwd=HERE.parent,
            stdout=subprocess.DEVNULL,
        )
        size_mb = html.stat().st_size / 1e6
        loads, charts = zip(
            *(open_page(html, Path(tmp) / f"profile{i}") for i in range(args.repeats)),
            strict=True,
        )
    load, drawn = statistics.median(loads), statistics.median(charts)
    print(
        f"N={args.size:,}: HTML {size_mb:.2f} MB; load event {load:.2f} s, every chart "
        f"drawn {drawn:.2f} s (medians of {args.repeats}; min load {min(loads):.2f} s)"
    )
    ok = size_mb < TARGET_MB and drawn < TARGET_S
    print(f"target: under {TARGET_MB:g} MB and {TARGET_S:g} s: {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
