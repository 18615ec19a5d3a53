"""Reader bugs met on logs as pandas and hand edits write them: each read as the other formats
read the same data, or refused with one line naming the file and line."""

from __future__ import annotations

import pytest
from test_input_validate import validate
from test_readers import fail

FILL = "give every column a field, an empty one for a missing value"
SHORT = f"line 3 has 2 fields, fewer than the header's 3; {FILL}"
LONG = "line 3 has 4 fields, more than the header's 3; quote values that contain {}"


@pytest.mark.parametrize(
    ("row", "message"),
    [("q2,false", SHORT), ("q2,false,1,2", LONG.format("a comma"))],
)
def test_a_csv_row_with_another_number_of_fields_is_named_by_its_line(tmp_path, row, message):
    """A row with fewer fields stopped every command with a traceback (AttributeError)."""
    path = tmp_path / "run.csv"
    path.write_text(f"question_id,correct,faithfulness\nq1,true,0.5\n{row}\nq3,true,1\n")
    expected = f"{path}: {message}"
    assert validate(path, code=2) == [expected]
    assert fail("compare", path, path, "-o", tmp_path / "r.html") == f"ragreport: error: {expected}"
    assert fail("convert", path, "-o", tmp_path / "r.parquet") == f"ragreport: error: {expected}"


def test_a_short_row_is_named_by_the_line_it_starts_on(tmp_path):
    """A row whose quoted answer holds a line break starts a line above the one it ends on."""
    path = tmp_path / "run.tsv"
    path.write_text('question_id\tanswer\tcorrect\nq1\t"two\nlines"\nq2\tb\ttrue\n')
    assert validate(path, code=2) == [
        f"{path}: line 2 has 2 fields, fewer than the header's 3; {FILL}"
    ]
    path.write_text('question_id\tanswer\tcorrect\nq1\t"two\nlines"\ttrue\tx\n')
    assert validate(path, code=2) == [f"{path}: line 2 has 4 fields, more than the header's 3; "
                                      "quote values that contain a tab"]  # fmt: skip


def test_a_ragas_csv_row_with_fewer_fields_is_named_by_its_line(tmp_path):
    path = tmp_path / "ragas.csv"
    path.write_text("user_input,response,faithfulness\nq one,a,0.5\nq two,b\nq three,c,1\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line == f"ragreport: error: {path}: {SHORT}"
