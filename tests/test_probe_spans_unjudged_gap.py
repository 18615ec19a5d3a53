"""Unjudged@k exactly UNJUDGED_GAP apart is flagged, as the audit's rule says ("0.05 or more
apart"), whatever the floating-point noise of the two shares."""

from __future__ import annotations

from reportgen.analysis.audit import UNJUDGED_GAP


def _row(unjudged: int) -> dict:
    """One question ranking 20 passages, all but the last ``unjudged`` labelled (p0 relevant)."""
    ids = [f"p{i}" for i in range(20)]
    judged = 20 - unjudged
    return {
        "question_id": "q1",
        "retrieved_ids": ids,
        "relevant_ids": ids[:judged],
        "relevant_grades": [1] + [0] * (judged - 1),
        "correct": True,
    }


def test_a_gap_of_exactly_the_threshold_is_flagged(tmp_path, write_log, compare):
    # A: 3 of the top 20 unjudged (0.15), B: 4 (0.20); 0.20 - 0.15 rounds below 0.05 in binary
    a = write_log(tmp_path / "a.parquet", [_row(3)])
    b = write_log(tmp_path / "b.parquet", [_row(4)])
    out = compare(a, b, tmp_path / "o", "--k", 20, "--n-boot", 100)
    assert out["audit"]["unjudged"]["diff"] == UNJUDGED_GAP
    html = (tmp_path / "o" / "report.html").read_text()
    assert '<li class="flag">Unjudged@20' in html
    assert "judge them before trusting the difference" in html
