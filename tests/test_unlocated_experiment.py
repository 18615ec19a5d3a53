"""Answer-only logs (no evidence located): the next experiment names no link, but says where the
answers that fall short went wrong, from faithfulness, and asks for the columns that locate
the evidence; it prescribes a change to the model only where most of them are unsupported."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def _logs(tmp_path: Path, wrong_faithful: int, wrong_unfaithful: int, faithful: bool = True):
    """40 answerable questions: 20 correct and faithful, then the wrong ones, faithful (0.9)
    or not (0.1), then correct and faithful again; B the same answers."""
    rows = []
    for i in range(40):
        wrong = 20 <= i < 20 + wrong_faithful + wrong_unfaithful
        unfaithful = 20 + wrong_faithful <= i < 20 + wrong_faithful + wrong_unfaithful
        row = {"question_id": f"q{i:02d}", "correct": not wrong, "answerable": True}
        if faithful:
            row["faithfulness"] = 0.1 if unfaithful else 0.9
        rows.append(row)
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path in paths:
        pd.DataFrame(rows).to_parquet(path)
    return paths


def _experiment(tmp_path: Path, compare, *counts, **kw) -> dict:
    a, b = _logs(tmp_path, *counts, **kw)
    out = compare(a, b, tmp_path / "o", "--supported-threshold", "0.5")
    return out["next_experiment"]["a"]


def test_answers_that_follow_their_passages_point_upstream_of_the_model(tmp_path, compare):
    e = _experiment(tmp_path, compare, 12, 4)
    assert e["stage"] == "end-to-end"
    assert e["change"].startswith(
        "look upstream of the model: 12 of the 16 answers that fall short follow their "
        "passages (faithfulness at least 0.5) and are wrong"
    )
    assert "instruct the model" not in e["change"]
    assert "log relevant_ids" in e["change"]
    assert e["numbers"]["faithful but wrong"] == 12
    assert e["numbers"]["unsupported by their passages"] == 4
    assert e["numbers"]["answers that fall short"] == 16


def test_unsupported_answers_ask_for_a_change_to_the_model(tmp_path, compare):
    e = _experiment(tmp_path, compare, 3, 9)
    assert e["change"].startswith(
        "instruct the model to answer only from the passages it is given and abstain "
        "otherwise (9 of the 12 answers that fall short are not supported by their passages)"
    )


def test_without_faithfulness_no_change_is_prescribed(tmp_path, compare):
    e = _experiment(tmp_path, compare, 10, 0, faithful=False)
    assert e["change"].startswith("log relevant_ids")
    assert "and faithfulness" in e["change"]
    assert "instruct the model" not in e["change"]
    assert e["numbers"]["answers that fall short"] == 10
